---------------------- MODULE MCAdmissionContiguityFifo ---------------------
(***************************************************************************)
(* Root of the models of the doorkeeper with contiguity over policy fifo:  *)
(* its policy module defines the hooks, and the bare INSTANCE binds the    *)
(* hooks, constants and variables of EmbeddingCacheAdmissionContiguity to  *)
(* the root's of the same names. tla/models.json gives each model's        *)
(* config.                                                                 *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifo, EmbeddingCacheAdmissionParams, EmbeddingCacheContiguityParams, TLC

INSTANCE EmbeddingCacheAdmissionContiguity
=============================================================================
