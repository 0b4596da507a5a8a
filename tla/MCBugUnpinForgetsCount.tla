----------------------- MODULE MCBugUnpinForgetsCount -----------------------
(***************************************************************************)
(* Bug model (fifo): the last unpin forgets to count the entry's blocks as *)
(* evictable.                                                              *)
(* The spec with Unpin <- UnpinForgetsCount (EmbeddingCacheBugs); 3 keys,  *)
(* 3 blocks, pin depth 2, view GhostView.                                  *)
(* Expected: TLC reports QuiescenceInv violated.                           *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
