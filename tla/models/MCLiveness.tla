----------------------------- MODULE MCLiveness -----------------------------
(***************************************************************************)
(* Root of the liveness models (EmbeddingCacheCallers, fifo), one config   *)
(* each: the all-fairness model, and the models that drop one assumption   *)
(* (a bug spec below) or the quiescence condition (NoCondition) and must   *)
(* violate one property (tla/models.json). No symmetry and no view: TLC's  *)
(* liveness checking is unsound with either.                               *)
(***************************************************************************)
EXTENDS EmbeddingCacheCallers, TLC

CONSTANTS k1, k2, k3   \* model values for the keys (a config may leave k3 out of Keys)

\* The save sizes: k1 needs the whole pool (3 blocks), k2 one block, k3 two.
MCNeed == [k \in Keys |-> IF k = k1 THEN 3 ELSE IF k = k2 THEN 1 ELSE 2]

\* All fairness but SaverFinishFairness.
NoSaverFairnessSpec == CallersSafety /\ SaverRetryFairness /\ AllocStrongFairness
                                    /\ ReaderFairness

\* All fairness but ReaderFairness.
NoReaderFairnessSpec == CallersSafety /\ SaverRetryFairness /\ AllocStrongFairness
                                     /\ SaverFinishFairness

\* Weak instead of strong fairness of the successful alloc.
WeakAllocSpec == CallersSafety /\ SaverRetryFairness /\ AllocWeakFairness
                              /\ SaverFinishFairness /\ ReaderFairness

\* For AllocCondition <- NoCondition: the retried alloc without its quiescence
\* condition (EmbeddingCacheCallers, AllocCondition).
NoCondition == TRUE
=============================================================================
