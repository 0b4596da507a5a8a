---------------------------- MODULE MCLeaseSieve ----------------------------
(***************************************************************************)
(* Root of the lease models of policy sieve: its policy module defines the *)
(* hooks, and the bare INSTANCE binds the hooks, constants and variables   *)
(* of the lease module (EmbeddingCacheLeases) to the root's of the same    *)
(* names. tla/models.json gives each model's config.                       *)
(***************************************************************************)
EXTENDS EmbeddingCacheSieve, EmbeddingCacheLeaseParams, TLC

INSTANCE EmbeddingCacheLeases
=============================================================================
