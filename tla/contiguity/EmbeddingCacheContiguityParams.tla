----------------- MODULE EmbeddingCacheContiguityParams -----------------
(***************************************************************************)
(* The contiguity layer's constant, declared once (only a declaration, as *)
(* EmbeddingCacheParams for the core): the contiguity module and every    *)
(* root that instantiates it extend this, so that its bare INSTANCE       *)
(* substitutes it by the root's own.                                      *)
(***************************************************************************)
CONSTANT
    Contiguity  \* k: victims an alloc may evict beyond need for a free run (>= 0)
=============================================================================
