---------------------------- MODULE MCReplayWide ----------------------------
(***************************************************************************)
(* Replay input for the fifo policy: 3 keys, 3 blocks, pin depth 2, no    *)
(* view or symmetry, no depth bound in effect (ReplayDepth 1000), Alloc   *)
(* taking the lowest n ids of its pool: its exact state graph is dumped   *)
(* and every edge replayed on the Python code (verify/replay.py); it sees *)
(* the eviction order.  The cuts: EmbeddingCacheReplay.                   *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifo

CONSTANT ReplayDepth    \* explore states at most this many steps from Init

INSTANCE EmbeddingCacheReplay   \* DepthConstraint, CanonicalAlloc
=============================================================================
