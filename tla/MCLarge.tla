------------------------------ MODULE MCLarge ------------------------------
(***************************************************************************)
(* Large model of the fifo policy at counts level (the same actions with  *)
(* Level = "counts": the quotient by block renaming), 5 keys, 8 blocks,   *)
(* pin depth 2, with the ghost clock, explored modulo key renaming and    *)
(* stamp ranks through QuotientView.                                       *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifoCheck
=============================================================================
