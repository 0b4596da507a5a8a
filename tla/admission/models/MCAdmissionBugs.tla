--------------------------- MODULE MCAdmissionBugs ---------------------------
(***************************************************************************)
(* Root of the admission bug models (EmbeddingCacheAdmissionBugs, over    *)
(* fifo): each config substitutes one defect and checks the one invariant *)
(* or property it targets; tla/models.json states each defect and its     *)
(* expectation.                                                            *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifo, EmbeddingCacheAdmissionParams, TLC

INSTANCE EmbeddingCacheAdmissionBugs
=============================================================================
