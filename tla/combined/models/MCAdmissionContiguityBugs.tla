---------------------- MODULE MCAdmissionContiguityBugs ---------------------
(***************************************************************************)
(* Root of the bug models of the doorkeeper with contiguity                *)
(* (EmbeddingCacheAdmissionContiguityBugs, over fifo): each config         *)
(* substitutes one defect and checks the one property it targets;          *)
(* tla/models.json states each defect and its expectation.                 *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifo, EmbeddingCacheAdmissionParams, EmbeddingCacheContiguityParams, TLC

INSTANCE EmbeddingCacheAdmissionContiguityBugs
=============================================================================
