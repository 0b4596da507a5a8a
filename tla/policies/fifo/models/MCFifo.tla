------------------------------- MODULE MCFifo -------------------------------
(***************************************************************************)
(* Root of the fifo models without ghost variables, one config each        *)
(* (tla/models.json gives each model's config and what it checks).         *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifo
=============================================================================
