---------------------- MODULE MCBugS3FifoHoldSmallOnly ----------------------
(***************************************************************************)
(* Bug model (s3fifo): s3fifo pin dequeues from S only, a pinned key of M  *)
(* stays queued.                                                           *)
(* The spec with Hold <- HoldSmallOnly (EmbeddingCacheS3FifoBugs); 3 keys, *)
(* 3 blocks, pin depth 2, view S3FifoView.                                 *)
(* Expected: TLC reports EvictableSetInv violated.                         *)
(***************************************************************************)
EXTENDS EmbeddingCacheS3FifoBugs
=============================================================================
