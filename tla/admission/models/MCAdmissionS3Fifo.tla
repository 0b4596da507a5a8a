-------------------------- MODULE MCAdmissionS3Fifo --------------------------
(***************************************************************************)
(* Root of the admission models of policy s3fifo: its policy module defines *)
(* the hooks, and the bare INSTANCE binds the hooks, constants and         *)
(* variables of the admission module (EmbeddingCacheAdmission) to the      *)
(* root's of the same names. tla/models.json gives each model's config.    *)
(***************************************************************************)
EXTENDS EmbeddingCacheS3Fifo, EmbeddingCacheAdmissionParams, TLC

INSTANCE EmbeddingCacheAdmission
=============================================================================
