------------------------------ MODULE MCDeep -------------------------------
(***************************************************************************)
(* Deep model of the fifo policy: block level, 4 keys, 6 blocks, pin      *)
(* depth 2, with the ghost clock of EmbeddingCacheFifoCheck, explored     *)
(* modulo key and block renaming and stamp ranks through QuotientView     *)
(* (README.md, "Reductions").                                              *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifoCheck
=============================================================================
