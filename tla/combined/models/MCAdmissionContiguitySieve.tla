--------------------- MODULE MCAdmissionContiguitySieve ---------------------
(***************************************************************************)
(* Root of the models of the doorkeeper with contiguity over policy sieve: *)
(* its policy module defines the hooks, and the bare INSTANCE binds the    *)
(* hooks, constants and variables of EmbeddingCacheAdmissionContiguity to  *)
(* the root's of the same names. tla/models.json gives each model's        *)
(* config.                                                                 *)
(***************************************************************************)
EXTENDS EmbeddingCacheSieve, EmbeddingCacheAdmissionParams, EmbeddingCacheContiguityParams, TLC

INSTANCE EmbeddingCacheAdmissionContiguity
=============================================================================
