------------------------- MODULE MCContiguityFifo -------------------------
(***************************************************************************)
(* Root of the contiguity models of policy fifo: its policy module       *)
(* defines the hooks, and the bare INSTANCE binds the hooks, constants and *)
(* variables of the contiguity module (EmbeddingCacheContiguity) to the    *)
(* root's of the same names. tla/models.json gives each model's config.    *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifo, EmbeddingCacheContiguityParams, TLC

INSTANCE EmbeddingCacheContiguity
=============================================================================
