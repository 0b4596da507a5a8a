---------------------- MODULE MCBugEvictBeforeFailFast ----------------------
(***************************************************************************)
(* Bug model (fifo): alloc evicts before the fail-fast check.              *)
(* The spec with AllocFail <- AllocFailEvicts (EmbeddingCacheBugs); 3      *)
(* keys, 3 blocks, pin depth 2, view GhostView.                            *)
(* Expected: TLC reports FailedAllocUnchangedProp violated.                *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
