------------------------------- MODULE MCCore -------------------------------
(***************************************************************************)
(* The policy-agnostic core spec on its own: any allowed victim set.       *)
(* Block level, 3 keys, 4 blocks, pin depth 2, quotient view (key and      *)
(* block renaming).  Checks that the core's own nondeterminism keeps the   *)
(* shared invariants and action properties.                                *)
(***************************************************************************)
EXTENDS EmbeddingCacheReductions
=============================================================================
