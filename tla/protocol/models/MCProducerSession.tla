--------------------------- MODULE MCProducerSession ---------------------------
(***************************************************************************)
(* Root of the producer session models (EmbeddingCacheProducerSession,    *)
(* fifo), one config each: vLLM 0.33's session under fairness, without    *)
(* one fairness assumption (a spec below each), and with the re-grant     *)
(* below in place of DropOld; tla/models.json gives what each must        *)
(* report.  No symmetry and no view: the fair models check liveness.      *)
(***************************************************************************)
EXTENDS EmbeddingCacheProducerSession, TLC

CONSTANTS k1, k2, p1, p2   \* model values for the items and the peers

\* Every output one block (of a pool of one: a save evicts the other item's
\* entry unless a grant pins it).
MCNeed == [k \in Keys |-> 1]

\* All fairness but LeaseClockFairness.
NoLeaseClockFairnessSpec ==
    ProducerSessionSafety /\ SessionCallFairness /\ SaveReportFairness /\ ProducerPollFairness

\* All fairness but ProducerPollFairness.
NoProducerPollFairnessSpec ==
    ProducerSessionSafety /\ SessionCallFairness /\ SaveReportFairness /\ LeaseClockFairness

\* The re-grant as _grant_or_nack wrote it before vLLM 0.33: the new grant
\* overwrites the old one, whose pin stays taken.
DropOldOverwrites(p, k) ==
    /\ grant[p][k] = "regrant"
    /\ grant' = [grant EXCEPT ![p][k] = "live"]
    /\ UNCHANGED <<entries, free, evictable, lastOp, policy, saving, session>>
=============================================================================
