------------------------- MODULE MCContiguityS3Fifo -------------------------
(***************************************************************************)
(* Root of the contiguity models of policy s3fifo: its policy module       *)
(* defines the hooks, and the bare INSTANCE binds the hooks, constants and *)
(* variables of the contiguity module (EmbeddingCacheContiguity) to the    *)
(* root's of the same names. tla/models.json gives each model's config.    *)
(***************************************************************************)
EXTENDS EmbeddingCacheS3Fifo, EmbeddingCacheContiguityParams, TLC

INSTANCE EmbeddingCacheContiguity

\* Keys are interchangeable (for SYMMETRY; never with liveness).  Defined in
\* the root that uses it, not in the shared modules (EmbeddingCacheReductions
\* says why).
KeySymmetry == Permutations(Keys)
=============================================================================
