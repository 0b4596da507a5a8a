--------------------- MODULE MCAdmissionContiguityS3Fifo --------------------
(***************************************************************************)
(* Root of the models of the doorkeeper with contiguity over policy        *)
(* s3fifo: its policy module defines the hooks, and the bare INSTANCE      *)
(* binds the hooks, constants and variables of                             *)
(* EmbeddingCacheAdmissionContiguity to the root's of the same names.      *)
(* tla/models.json gives each model's config.                              *)
(***************************************************************************)
EXTENDS EmbeddingCacheS3Fifo, EmbeddingCacheAdmissionParams, EmbeddingCacheContiguityParams, TLC

INSTANCE EmbeddingCacheAdmissionContiguity

\* Keys are interchangeable (for SYMMETRY; never with liveness).  Defined in
\* the root that uses it, not in the shared modules (EmbeddingCacheReductions
\* says why).
KeySymmetry == Permutations(Keys)
=============================================================================
