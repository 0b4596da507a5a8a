------------------------ MODULE MCBugHeldIgnoresPins ------------------------
(***************************************************************************)
(* Bug model (fifo): has_held_entries ignores pinned entries.              *)
(* The spec with HasHeldEntries <- HasHeldEntriesNotReadyOnly              *)
(* (EmbeddingCacheBugs); 3 keys, 3 blocks, pin depth 2, view GhostView.    *)
(* Expected: TLC reports HeldEntriesInv violated.                          *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
