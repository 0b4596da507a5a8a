----------------------- MODULE MCBugUnpinDoubleAppend -----------------------
(***************************************************************************)
(* Bug model (fifo): every unpin appends to the queue (double append).     *)
(* The spec with CacheUnpin <- UnpinAlwaysAppends (EmbeddingCacheBugs); 3  *)
(* keys, 3 blocks, pin depth 2, view GhostView.                            *)
(* Expected: TLC reports EvictableSetInv violated.                         *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
