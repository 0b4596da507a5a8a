----------------------------- MODULE MCGdsfBugs -----------------------------
(***************************************************************************)
(* Root of the gdsf bug models (EmbeddingCacheGdsfBugs): each config       *)
(* substitutes one defect; tla/models.json states each defect and its      *)
(* expectation.                                                            *)
(***************************************************************************)
EXTENDS EmbeddingCacheGdsfBugs
=============================================================================
