------------------------- MODULE MCReplayLeaseS3Fifo -------------------------
(***************************************************************************)
(* Root of the lease replay input of policy s3fifo: the lease steps labelled   *)
(* with their calls (EmbeddingCacheLeaseReplay), no view, cut at          *)
(* ReplayDepth; every edge is replayed on the Python code                 *)
(* (verify/lease_replay.py). Not a proof model.                            *)
(***************************************************************************)
EXTENDS EmbeddingCacheS3Fifo, EmbeddingCacheLeaseParams, TLC

CONSTANT ReplayDepth

VARIABLE step

INSTANCE EmbeddingCacheLeaseReplay
=============================================================================
