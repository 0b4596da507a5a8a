---------------------------- MODULE MCReplayDeep ----------------------------
(***************************************************************************)
(* The deep model's constants (4 keys, 6 blocks, pin depth 2) without any *)
(* view or symmetry, cut at a depth, so that its exact state graph can be  *)
(* dumped and every edge replayed on the Python code (verify/replay.py).  *)
(* Not a proof model: MCDeep checks the invariants on the whole space.    *)
(* The cuts (depth, lowest block ids): EmbeddingCacheReplay.              *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifo

CONSTANT ReplayDepth    \* explore states at most this many steps from Init

INSTANCE EmbeddingCacheReplay   \* DepthConstraint, CanonicalAlloc
=============================================================================
