----------------------- MODULE MCBugUnpinDoubleAppend -----------------------
(***************************************************************************)
(* Bug model: every unpin appends to the queue (double append).            *)
(* The spec with Unpin replaced by UnpinAlwaysAppends                      *)
(* (EmbeddingCacheBugs); 3 keys, 3 blocks, pin depth 2.                    *)
(* Expected: TLC reports EvictQueueInv violated.                           *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
