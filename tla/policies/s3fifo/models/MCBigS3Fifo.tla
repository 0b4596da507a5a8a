---------------------------- MODULE MCBigS3Fifo ----------------------------
(***************************************************************************)
(* Big model of the s3fifo policy, not in the default run (default_run     *)
(* false in models.json): minutes in one process; run it by name, with the *)
(* tag big, or distributed (the nightly profile). Counts level, 3 keys, 6  *)
(* blocks, pin depth 2, SmallTarget 1, GhostCapacity 5, with the ghost set *)
(* reused, explored modulo key renaming (QuotientView, through BigView).   *)
(* Expected: pass.                                                         *)
(***************************************************************************)
EXTENDS EmbeddingCacheS3FifoCheck, EmbeddingCacheBig

\* QuotientView, the whole state evaluated first (EmbeddingCacheBig).
BigView == Evaluated(checkVars, QuotientView)
=============================================================================
