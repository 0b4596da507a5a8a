------------------------ MODULE MCBugHeldIgnoresPins ------------------------
(***************************************************************************)
(* Bug model: has_held_entries ignores pinned entries.                     *)
(* The spec with HasHeldEntries replaced by HasHeldEntriesNotReadyOnly     *)
(* (EmbeddingCacheBugs); 3 keys, 3 blocks, pin depth 2.                    *)
(* Expected: TLC reports HeldEntriesInv violated.                          *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
