------------------------------ MODULE MCDeep -------------------------------
(***************************************************************************)
(* Deep model: the block-level spec with 4 keys, 6 blocks, pin depth 2,   *)
(* explored modulo key and block renaming through QuotientView (see       *)
(* EmbeddingCacheReductions and README.md for the soundness argument).    *)
(***************************************************************************)
EXTENDS EmbeddingCacheReductions
=============================================================================
