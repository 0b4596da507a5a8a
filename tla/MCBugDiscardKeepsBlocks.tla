---------------------- MODULE MCBugDiscardKeepsBlocks -----------------------
(***************************************************************************)
(* Bug model: discard forgets to return the entry's blocks.                *)
(* The spec with Discard replaced by DiscardKeepsBlocks                    *)
(* (EmbeddingCacheBugs); 3 keys, 3 blocks, pin depth 2.                    *)
(* Expected: TLC reports BlockConservationInv violated.                    *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
