---------------------- MODULE MCBugEvictBeforeFailFast ----------------------
(***************************************************************************)
(* Bug model: alloc evicts before the fail-fast check.                     *)
(* The spec with AllocFail replaced by AllocFailEvicts                     *)
(* (EmbeddingCacheBugs); 3 keys, 3 blocks, pin depth 2.                    *)
(* Expected: TLC reports FailedAllocUnchangedProp violated.                *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
