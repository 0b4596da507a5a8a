---------------------------- MODULE MCS3FifoBugs ----------------------------
(***************************************************************************)
(* Root of the s3fifo bug models (EmbeddingCacheS3FifoBugs): each config   *)
(* substitutes one defect; tla/models.json states each defect and its      *)
(* expectation.                                                            *)
(***************************************************************************)
EXTENDS EmbeddingCacheS3FifoBugs
=============================================================================
