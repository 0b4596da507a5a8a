------------------------ MODULE MCLivenessWeakAlloc -------------------------
(***************************************************************************)
(* Liveness bug model: only weak fairness of the successful alloc.  A      *)
(* saver needing the whole pool retries forever while the other key        *)
(* is saved, read and re-read: its alloc is enabled only intermittently,   *)
(* so weak fairness never forces it (starvation).                          *)
(* Expected: TLC reports AllocEventuallySucceedsProp violated.             *)
(***************************************************************************)
EXTENDS EmbeddingCacheCallers, TLC

CONSTANTS k1, k2   \* model values for the keys

\* The save sizes: k1 needs the whole pool, k2 one block.
MCNeed == (k1 :> 3) @@ (k2 :> 1)

\* Weak instead of strong fairness of the successful alloc.
BugSpec == CallersSafety /\ SaverRetryFairness /\ AllocWeakFairness
                         /\ SaverFinishFairness /\ ReaderFairness
=============================================================================
