----------------------- MODULE MCBugFailFastFreeOnly ------------------------
(***************************************************************************)
(* Bug model (fifo): the fail-fast check ignores evictable blocks.         *)
(* The spec with CanAlloc <- CanAllocFreeOnly (EmbeddingCacheBugs); 3      *)
(* keys, 3 blocks, pin depth 2, view GhostView.                            *)
(* Expected: TLC reports AllocFailsOnlyWhenShortProp violated.             *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
