------------------------------ MODULE MCNixlRead ------------------------------
(***************************************************************************)
(* Root of the NIXL read models (EmbeddingCacheNixlRead, fifo), one config *)
(* each: vLLM 0.33's code with one of its two fixes missing, both fixes    *)
(* under fairness, and both fixes without the poll's fairness (a spec     *)
(* below); tla/models.json gives what each must report.  No symmetry and *)
(* no view: every model checks liveness.                                  *)
(***************************************************************************)
EXTENDS EmbeddingCacheNixlRead, TLC

CONSTANTS k1, k2, k3   \* model values for the items

\* The encodings' sizes: k1 one block, k2 and k3 two (of a pool of three, so
\* that a read's alloc evicts the entries earlier reads made ready).
MCNeed == [k \in Keys |-> IF k = k1 THEN 1 ELSE 2]

\* All fairness but ConsumerPollFairness.
NoConsumerPollFairnessSpec == NixlReadSafety /\ ReadCallFairness
=============================================================================
