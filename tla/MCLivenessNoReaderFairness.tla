--------------------- MODULE MCLivenessNoReaderFairness ---------------------
(***************************************************************************)
(* Liveness bug model: readers need not release their pins (no             *)
(* ReaderFairness), so a pin can be held forever.                          *)
(* Expected: TLC reports PinReleasedProp violated.                         *)
(***************************************************************************)
EXTENDS EmbeddingCacheCallers, TLC

CONSTANTS k1, k2   \* model values for the keys

\* The save sizes: k1 needs the whole pool, k2 one block.
MCNeed == (k1 :> 3) @@ (k2 :> 1)

\* All fairness but ReaderFairness.
BugSpec == CallersSafety /\ SaverRetryFairness /\ AllocStrongFairness
                         /\ SaverFinishFairness
=============================================================================
