----------------------------- MODULE MCLiveness -----------------------------
(***************************************************************************)
(* Liveness model: 3 keys whose saves need 3, 1 and 2 blocks of a 3-block  *)
(* pool, two readers (pin depth 2), all fairness assumptions.  No          *)
(* symmetry and no view: TLC's liveness checking is unsound with either.   *)
(***************************************************************************)
EXTENDS EmbeddingCacheCallers, TLC

CONSTANTS k1, k2, k3   \* model values for the keys

\* The save sizes: k1 needs the whole pool.
MCNeed == (k1 :> 3) @@ (k2 :> 1) @@ (k3 :> 2)
=============================================================================
