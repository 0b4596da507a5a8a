-------------------------- MODULE MCBugEvictNewest --------------------------
(***************************************************************************)
(* Bug model (fifo): eviction takes the newest entry, not the oldest.      *)
(* The spec with EvictOne <- EvictOneNewest (EmbeddingCacheBugs); 3 keys,  *)
(* 3 blocks, pin depth 2, view GhostView.                                  *)
(* Expected: TLC reports EvictOldestFirstProp violated.                    *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
