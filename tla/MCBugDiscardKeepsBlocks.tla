---------------------- MODULE MCBugDiscardKeepsBlocks -----------------------
(***************************************************************************)
(* Bug model (fifo): discard forgets to return the entry's blocks.         *)
(* The spec with Discard <- DiscardKeepsBlocks (EmbeddingCacheBugs); 3     *)
(* keys, 3 blocks, pin depth 2, view GhostView.                            *)
(* Expected: TLC reports BlockConservationInv violated.                    *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
