--------------------------- MODULE MCReplaySieve ----------------------------
(***************************************************************************)
(* Root of the replay inputs of the sieve policy: no view or symmetry, cut *)
(* at ReplayDepth, an Alloc taking the lowest n ids of its pool (the cuts: *)
(* EmbeddingCacheReplay), lastOp recording each step, so that the exact    *)
(* state graph can be dumped and every edge replayed on the Python code    *)
(* (verify/replay.py). Not proof models. One config per replay model       *)
(* (tla/models.json, replay_models).                                       *)
(***************************************************************************)
EXTENDS EmbeddingCacheSieve

CONSTANT ReplayDepth    \* explore states at most this many steps from Init

INSTANCE EmbeddingCacheReplay   \* DepthConstraint, CanonicalAlloc
=============================================================================
