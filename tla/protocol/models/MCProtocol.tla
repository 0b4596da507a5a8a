------------------------------ MODULE MCProtocol ------------------------------
(***************************************************************************)
(* Root of the protocol models (EmbeddingCacheProtocol, fifo), one config  *)
(* each: vLLM 0.33's order (with and without fairness), the safe order,   *)
(* and the safe order without one fairness assumption (a spec below);     *)
(* tla/models.json gives what each must report.  No symmetry and no view: *)
(* the fair models check liveness, which TLC checks unsoundly with either. *)
(***************************************************************************)
EXTENDS EmbeddingCacheProtocol, TLC

CONSTANTS k1, k2, k3   \* model values for the items (a config may leave k3 out of Keys)

\* The output sizes: k1 one block, k2 and k3 two (of a pool of three, so that
\* an alloc of two may evict two entries and leave a block free).
MCNeed == [k \in Keys |-> IF k = k1 THEN 1 ELSE 2]

\* All fairness but LoadReleaseFairness.
NoReleaseFairnessSpec == ProtocolSafety /\ EngineFinishFairness /\ SaveReportFairness
=============================================================================
