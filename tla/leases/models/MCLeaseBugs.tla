---------------------------- MODULE MCLeaseBugs -----------------------------
(***************************************************************************)
(* Root of the lease bug models (EmbeddingCacheLeaseBugs, over fifo): each *)
(* config substitutes one defect and checks the one invariant or property  *)
(* it targets; tla/models.json states each defect and its expectation.     *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifo, EmbeddingCacheLeaseParams, TLC

INSTANCE EmbeddingCacheLeaseBugs
=============================================================================
