-------------------------- MODULE MCAdmissionFifo --------------------------
(***************************************************************************)
(* Root of the admission models of policy fifo: its policy module defines *)
(* the hooks, and the bare INSTANCE binds the hooks, constants and         *)
(* variables of the admission module (EmbeddingCacheAdmission) to the      *)
(* root's of the same names. tla/models.json gives each model's config.    *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifo, EmbeddingCacheAdmissionParams, TLC

INSTANCE EmbeddingCacheAdmission
=============================================================================
