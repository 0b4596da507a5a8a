--------------------- MODULE MCBugMarkReadyForgetsCount ---------------------
(***************************************************************************)
(* Bug model (fifo): mark_ready forgets the evictable counter.             *)
(* The spec with MarkReady <- MarkReadyForgetsCount (EmbeddingCacheBugs);  *)
(* 3 keys, 3 blocks, pin depth 2, view GhostView.                          *)
(* Expected: TLC reports EvictableCountInv violated.                       *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
