------------------------------- MODULE MCGdsf -------------------------------
(***************************************************************************)
(* Main model of the gdsf policy: block level, 3 keys, 4 blocks, pin      *)
(* depth 2, Scale 2, MaxFreq 2, explored modulo key and block renaming    *)
(* and the clock's absolute value through QuotientView.                   *)
(***************************************************************************)
EXTENDS EmbeddingCacheGdsfCheck
=============================================================================
