------------------------- MODULE MCReplayLeaseFifo -------------------------
(***************************************************************************)
(* Root of the lease replay input of policy fifo: the lease steps labelled   *)
(* with their calls (EmbeddingCacheLeaseReplay), no view, cut at          *)
(* ReplayDepth; every edge is replayed on the Python code                 *)
(* (verify/lease_replay.py). Not a proof model.                            *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifo, EmbeddingCacheLeaseParams, TLC

CONSTANT ReplayDepth

VARIABLE step

INSTANCE EmbeddingCacheLeaseReplay
=============================================================================
