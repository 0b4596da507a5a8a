------------------------ MODULE MCBugS3FifoMainFirst ------------------------
(***************************************************************************)
(* Bug model (s3fifo): s3fifo takes from S only when M is empty.           *)
(* The spec with FromSmall <- FromSmallOnlyWhenMainEmpty                *)
(* (EmbeddingCacheS3FifoBugs); 3 keys, 3 blocks, pin depth 2, view         *)
(* S3FifoView.                                                             *)
(* Expected: TLC reports EvictProbationFirstProp violated.                 *)
(***************************************************************************)
EXTENDS EmbeddingCacheS3FifoBugs
=============================================================================
