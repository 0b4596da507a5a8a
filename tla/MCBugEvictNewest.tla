-------------------------- MODULE MCBugEvictNewest --------------------------
(***************************************************************************)
(* Bug model: eviction takes the newest entry, not the oldest.             *)
(* The spec with Evict replaced by EvictNewest                             *)
(* (EmbeddingCacheBugs); 3 keys, 3 blocks, pin depth 2.                    *)
(* Expected: TLC reports EvictOldestFirstProp violated.                    *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
