--------------------- MODULE MCBugMarkReadyForgetsCount ---------------------
(***************************************************************************)
(* Bug model: mark_ready forgets the evictable counter.                    *)
(* The spec with MarkReady replaced by MarkReadyForgetsCount               *)
(* (EmbeddingCacheBugs); 3 keys, 3 blocks, pin depth 2.                    *)
(* Expected: TLC reports EvictableCountInv violated.                       *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
