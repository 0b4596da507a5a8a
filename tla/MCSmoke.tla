------------------------------ MODULE MCSmoke ------------------------------
(***************************************************************************)
(* Smoke model: the fifo policy at block level on the smallest pool that  *)
(* still exercises eviction, nested pins and partial eviction (2 keys,    *)
(* 3 blocks, pin depth 2).  No ghost, no symmetry and no view, so its     *)
(* state graph (dumped with -dump dot,actionlabels) is exact, for replay  *)
(* against the Python code.  (The order property needs the ghost clock:   *)
(* MCDeep, MCLarge.)                                                       *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifo
=============================================================================
