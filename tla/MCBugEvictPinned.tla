-------------------------- MODULE MCBugEvictPinned --------------------------
(***************************************************************************)
(* Bug model: pin leaves the entry queued, so a pinned entry is evicted.   *)
(* The spec with PinStep replaced by PinStepKeepsQueued                    *)
(* (EmbeddingCacheBugs); 3 keys, 3 blocks, pin depth 2.                    *)
(* Expected: TLC reports HeldBlocksStableProp violated.                    *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
