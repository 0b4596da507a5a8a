------------------------- MODULE MCFifoRefinesCore --------------------------
(***************************************************************************)
(* Refinement model (fifo): the fifo policy's spec implements the policy-  *)
(* agnostic core spec (CoreSpec == Core!Spec, Core == INSTANCE             *)
(* EmbeddingCache) with the policy's variables hidden: every step is a     *)
(* core step, in particular every victim set is one the core allows.  3    *)
(* keys, 3 blocks, pin depth 2, view PolicyHistoryView (drops lastOp).     *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifo
=============================================================================
