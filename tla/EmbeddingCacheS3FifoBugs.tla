---------------------- MODULE EmbeddingCacheS3FifoBugs ----------------------
(***************************************************************************)
(* Defects of the s3fifo policy, one per s3fifo property (see             *)
(* EmbeddingCacheBugs for how bug models use them).                        *)
(***************************************************************************)
EXTENDS EmbeddingCacheS3FifoCheck

\* EvictProbationFirstProp: the loop takes from S only when M is empty, so
\* keys that earned their place in M go before one-hit wonders in S.
\* (The whole of EvictOne, with FromSmall replaced, so that the defect reads
\* as one operator.)
FromSmallOnlyWhenMainEmpty(p) == p.small # <<>> /\ p.main = <<>>

RECURSIVE EvictOneMainFirst(_)
EvictOneMainFirst(p) ==
    IF FromSmallOnlyWhenMainEmpty(p)
       THEN LET k == Head(p.small) IN
            IF p.freq[k] >= 1
               THEN EvictOneMainFirst([p EXCEPT !.small = Tail(@), !.main = Append(@, k),
                                                !.home[k] = "M", !.freq[k] = 0])
               ELSE [victim |-> k,
                     p |-> [p EXCEPT !.small = Tail(@),
                                     !.ghost = Trim(Append(@, <<k, Size(k)>>)),
                                     !.freq = Drop(@, k), !.home = Drop(@, k)]]
       ELSE LET k == Head(p.main) IN
            IF p.freq[k] >= 1
               THEN EvictOneMainFirst([p EXCEPT !.main = Append(Tail(@), k),
                                                !.freq[k] = @ - 1])
               ELSE [victim |-> k,
                     p |-> [p EXCEPT !.main = Tail(@),
                                     !.freq = Drop(@, k), !.home = Drop(@, k)]]

\* EvictableSetInv: pin takes the key out of S only, so a pinned key of M
\* stays queued.
HoldSmallOnly(p, k) == [p EXCEPT !.small = Remove(@, k)]
=============================================================================
