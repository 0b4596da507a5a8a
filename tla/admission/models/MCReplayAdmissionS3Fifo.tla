---------------------- MODULE MCReplayAdmissionS3Fifo -----------------------
(***************************************************************************)
(* Root of the admission replay input of policy s3fifo: the doorkeeper     *)
(* (EmbeddingCacheAdmission) over the policy module, no view, cut at       *)
(* ReplayDepth (EmbeddingCacheReplay's DepthConstraint), at counts level   *)
(* (the replay compares block counts, so no choice of ids to cut); lastOp  *)
(* records each step, AllocDecline included, so that every edge is         *)
(* replayed on the Python code, the door compared (verify/replay.py). Not  *)
(* a proof model; its config is tla/models.json's (replay_models).         *)
(***************************************************************************)
EXTENDS EmbeddingCacheS3Fifo, EmbeddingCacheAdmissionParams, TLC

CONSTANT ReplayDepth    \* explore states at most this many steps from Init

INSTANCE EmbeddingCacheAdmission
INSTANCE EmbeddingCacheReplay   \* DepthConstraint
=============================================================================
