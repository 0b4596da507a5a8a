------------------------------ MODULE MCS3Fifo ------------------------------
(***************************************************************************)
(* Main model of the s3fifo policy: block level, 3 keys, 3 blocks, pin    *)
(* depth 2, SmallTarget 1, GhostCapacity 2 (the draft's values for N = 3),*)
(* with the ghost set `reused`, explored modulo key and block renaming    *)
(* through QuotientView.                                                   *)
(***************************************************************************)
EXTENDS EmbeddingCacheS3FifoCheck
=============================================================================
