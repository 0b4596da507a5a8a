------------------------- MODULE MCContiguityBugs -------------------------
(***************************************************************************)
(* Root of the contiguity bug models (EmbeddingCacheContiguityBugs, over  *)
(* fifo): each config substitutes one defect and checks the one property  *)
(* it targets; tla/models.json states each defect and its expectation.    *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifo, EmbeddingCacheContiguityParams, TLC

INSTANCE EmbeddingCacheContiguityBugs
=============================================================================
