---------------------- MODULE MCBugGdsfHoldKeepsOrder -----------------------
(***************************************************************************)
(* Bug model (gdsf): gdsf pin leaves the key in the tie-break order.       *)
(* The spec with Hold <- HoldKeepsOrder (EmbeddingCacheGdsfBugs); 3 keys,  *)
(* 3 blocks, pin depth 2, view GdsfView.                                   *)
(* Expected: TLC reports EvictableSetInv violated.                         *)
(***************************************************************************)
EXTENDS EmbeddingCacheGdsfBugs
=============================================================================
