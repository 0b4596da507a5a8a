-------------------- MODULE MCLivenessOverlappingReaders --------------------
(***************************************************************************)
(* Liveness bug model: all fairness, but two readers whose pins on         *)
(* one entry overlap (r1 pins, r2 pins, r1 unpins, r1 pins, r2 unpins,     *)
(* ...) keep it pinned forever although each pin is released: the saver    *)
(* needing the whole pool starves even under strong fairness.              *)
(* Expected: TLC reports AllocEventuallySucceedsProp violated.             *)
(***************************************************************************)
EXTENDS EmbeddingCacheCallers, TLC

CONSTANTS k1, k2   \* model values for the keys

\* The save sizes: k1 needs the whole pool, k2 one block.
MCNeed == (k1 :> 3) @@ (k2 :> 1)

\* All fairness assumptions; the starvation comes from the readers.
BugSpec == CallersSpec

\* Drop the quiescence condition of AllocEventuallySucceedsProp.
NoCondition == TRUE
=============================================================================
