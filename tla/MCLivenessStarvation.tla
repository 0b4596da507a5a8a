------------------------ MODULE MCLivenessStarvation ------------------------
(***************************************************************************)
(* Starvation model: all fairness assumptions and one reader, but without  *)
(* the quiescence condition.  A saver needing the whole pool starves: the  *)
(* reader re-pins k2 whenever k3's save is in flight, and k3 is re-saved   *)
(* (after a discard) whenever k2 is pinned, so the pool is never free.     *)
(* Expected: TLC reports AllocEventuallySucceedsProp violated.             *)
(***************************************************************************)
EXTENDS EmbeddingCacheCallers, TLC

CONSTANTS k1, k2, k3   \* model values for the keys

\* The save sizes: k1 needs the whole pool.
MCNeed == (k1 :> 3) @@ (k2 :> 1) @@ (k3 :> 2)

\* Drop the quiescence condition of AllocEventuallySucceedsProp.
NoCondition == TRUE
=============================================================================
