------------------------ MODULE MCS3FifoRefinesCore -------------------------
(***************************************************************************)
(* Refinement model (s3fifo): the s3fifo policy's spec implements the      *)
(* policy-agnostic core spec (CoreSpec == Core!Spec, Core == INSTANCE      *)
(* EmbeddingCache) with the policy's variables hidden: every step is a     *)
(* core step, in particular every victim set is one the core allows.  3    *)
(* keys, 3 blocks, pin depth 1, view QuotientView (key and block         *)
(* renaming; CoreSpec is invariant under it).                              *)
(***************************************************************************)
EXTENDS EmbeddingCacheS3FifoCheck
=============================================================================
