--------------------------- MODULE MCS3FifoCheck ----------------------------
(***************************************************************************)
(* Root of the s3fifo models with the ghost set reused                     *)
(* (EmbeddingCacheS3FifoCheck), one config each (tla/models.json).         *)
(***************************************************************************)
EXTENDS EmbeddingCacheS3FifoCheck
=============================================================================
