---------------------------- MODULE MCSieveCheck ----------------------------
(***************************************************************************)
(* Root of the sieve models with the ghosts stamp, gclock, used and ghand  *)
(* (EmbeddingCacheSieveCheck), one config each (tla/models.json).          *)
(***************************************************************************)
EXTENDS EmbeddingCacheSieveCheck
=============================================================================
