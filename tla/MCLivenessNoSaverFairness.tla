--------------------- MODULE MCLivenessNoSaverFairness ----------------------
(***************************************************************************)
(* Liveness bug model: savers need not finish a started write (no          *)
(* SaverFinishFairness), so a not-ready entry can stay not-ready forever.  *)
(* Expected: TLC reports SaveResolvesProp violated.                        *)
(***************************************************************************)
EXTENDS EmbeddingCacheCallers, TLC

CONSTANTS k1, k2   \* model values for the keys

\* The save sizes: k1 needs the whole pool, k2 one block.
MCNeed == (k1 :> 3) @@ (k2 :> 1)

\* All fairness but SaverFinishFairness.
BugSpec == CallersSafety /\ SaverRetryFairness /\ AllocStrongFairness
                         /\ ReaderFairness
=============================================================================
