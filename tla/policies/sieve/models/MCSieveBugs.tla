---------------------------- MODULE MCSieveBugs -----------------------------
(***************************************************************************)
(* Root of the sieve bug models (EmbeddingCacheSieveBugs): each config     *)
(* substitutes one defect; tla/models.json states each defect and its      *)
(* expectation.                                                            *)
(***************************************************************************)
EXTENDS EmbeddingCacheSieveBugs
=============================================================================
