----------------------- MODULE MCReplayContiguityFifo -----------------------
(***************************************************************************)
(* Root of the contiguity replay input of policy fifo: contiguity-aware    *)
(* eviction (EmbeddingCacheContiguity) over the policy module, no view,    *)
(* cut at ReplayDepth (EmbeddingCacheReplay's DepthConstraint) but not by  *)
(* CanonicalAlloc: every choice of block ids an alloc may take is an edge, *)
(* and the replay follows the code's own choice (block-exact:              *)
(* verify/replay.py). Not a proof model; its config is tla/models.json's   *)
(* (replay_models).                                                        *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifo, EmbeddingCacheContiguityParams, TLC

CONSTANT ReplayDepth    \* explore states at most this many steps from Init

INSTANCE EmbeddingCacheContiguity
INSTANCE EmbeddingCacheReplay   \* DepthConstraint
=============================================================================
