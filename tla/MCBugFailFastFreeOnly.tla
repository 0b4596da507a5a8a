----------------------- MODULE MCBugFailFastFreeOnly ------------------------
(***************************************************************************)
(* Bug model: the fail-fast check ignores evictable blocks.                *)
(* The spec with CanAlloc replaced by CanAllocFreeOnly                     *)
(* (EmbeddingCacheBugs); 3 keys, 3 blocks, pin depth 2.                    *)
(* Expected: TLC reports AllocFailsOnlyWhenShortProp violated.             *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
