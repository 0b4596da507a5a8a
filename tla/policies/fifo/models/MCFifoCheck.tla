---------------------------- MODULE MCFifoCheck -----------------------------
(***************************************************************************)
(* Root of the fifo models with the ghost clock (EmbeddingCacheFifoCheck), *)
(* one config each (tla/models.json).                                      *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifoCheck
=============================================================================
