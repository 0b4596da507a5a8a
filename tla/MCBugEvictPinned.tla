-------------------------- MODULE MCBugEvictPinned --------------------------
(***************************************************************************)
(* Bug model (fifo): pin leaves the entry queued, so a pinned entry is     *)
(* evicted.                                                                *)
(* The spec with Hold <- HoldKeepsQueued (EmbeddingCacheBugs); 3 keys, 3   *)
(* blocks, pin depth 2, view GhostView.                                    *)
(* Expected: TLC reports HeldBlocksStableProp violated.                    *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
