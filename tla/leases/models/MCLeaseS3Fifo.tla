--------------------------- MODULE MCLeaseS3Fifo ----------------------------
(***************************************************************************)
(* Root of the lease models of policy s3fifo: its policy module defines    *)
(* the hooks, and the bare INSTANCE binds the hooks, constants and         *)
(* variables of the lease module (EmbeddingCacheLeases) to the root's of   *)
(* the same names. tla/models.json gives each model's config.              *)
(***************************************************************************)
EXTENDS EmbeddingCacheS3Fifo, EmbeddingCacheLeaseParams, TLC

INSTANCE EmbeddingCacheLeases
=============================================================================
