--------------------------- MODULE MCReplayS3Fifo ---------------------------
(***************************************************************************)
(* Replay input for the s3fifo policy: 3 keys, 3 blocks, pin depth 2, no *)
(* view, cut at ReplayDepth, Alloc taking the lowest n ids of its pool    *)
(* (EmbeddingCacheReplay), lastOp recording each step.  Its states show  *)
(* the policy's variables as the fields of the record variable policy    *)
(* (tla/README.md, "For the conformance checks").  Not a proof model.    *)
(***************************************************************************)
EXTENDS EmbeddingCacheS3Fifo

CONSTANT ReplayDepth    \* explore states at most this many steps from Init

INSTANCE EmbeddingCacheReplay   \* DepthConstraint, CanonicalAlloc
=============================================================================
