------------------------------ MODULE MCLarge ------------------------------
(***************************************************************************)
(* Large model: the counts-level spec (the block-level spec's quotient by *)
(* block renaming) with 5 keys, 8 blocks, pin depth 2, explored modulo    *)
(* key renaming through QuotientView.                                     *)
(***************************************************************************)
EXTENDS EmbeddingCacheCounts
=============================================================================
