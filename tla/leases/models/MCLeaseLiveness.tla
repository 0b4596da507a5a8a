--------------------------- MODULE MCLeaseLiveness ---------------------------
(***************************************************************************)
(* Root of the lease liveness models (EmbeddingCacheLeaseCallers, fifo),   *)
(* one config each, with the save sizes of MCLiveness (MCNeed).  No        *)
(* symmetry and no view: TLC's liveness checking is unsound with either.   *)
(***************************************************************************)
EXTENDS MCLiveness, EmbeddingCacheLeaseCallers
=============================================================================
