---------------------- MODULE EmbeddingCacheS3FifoBugs ----------------------
(***************************************************************************)
(* Defects of the s3fifo policy, one per s3fifo property (see             *)
(* EmbeddingCacheBugs for how bug models use them).                        *)
(***************************************************************************)
EXTENDS EmbeddingCacheS3FifoCheck

\* EvictProbationFirstProp: the loop takes from S only when M is empty, so
\* keys that earned their place in M go before one-hit wonders in S.
FromSmallOnlyWhenMainEmpty(p, sz) == p.small # <<>> /\ p.main = <<>>

\* EvictableSetInv: pin takes the key out of S only, so a pinned key of M
\* stays queued.
HoldSmallOnly(p, k) == [p EXCEPT !.small = Remove(@, k)]
=============================================================================
