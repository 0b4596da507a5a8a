------------------------------ MODULE MCSmoke ------------------------------
(***************************************************************************)
(* Smoke model: the block-level spec on the smallest pool that still      *)
(* exercises eviction, nested pins and partial eviction (2 keys, 3 blocks, *)
(* pin depth 2).  No symmetry and no view, so its state graph (dumped with *)
(* -dump dot,actionlabels) is exact, for replay against the Python code.   *)
(***************************************************************************)
EXTENDS EmbeddingCache
=============================================================================
