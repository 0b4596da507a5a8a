---------------------------- MODULE MCGdsfCheck -----------------------------
(***************************************************************************)
(* Root of the gdsf models with the ghost lastVictimPrio                   *)
(* (EmbeddingCacheGdsfCheck), one config each (tla/models.json).           *)
(***************************************************************************)
EXTENDS EmbeddingCacheGdsfCheck
=============================================================================
