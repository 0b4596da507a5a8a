----------------------------- MODULE MCBigFifo -----------------------------
(***************************************************************************)
(* Big model of the fifo policy, not in the default run (default_run false *)
(* in models.json): minutes in one process; run it by name, with the tag   *)
(* big, or distributed (the nightly profile). Counts level, 6 keys, 10     *)
(* blocks, pin depth 2, with the ghost clock, explored modulo key renaming *)
(* and stamp ranks (QuotientView, through BigView): MCLarge with one key   *)
(* more. Expected: pass.                                                   *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifoCheck, EmbeddingCacheBig

\* QuotientView, the whole state evaluated first (EmbeddingCacheBig).
BigView == Evaluated(checkVars, QuotientView)
=============================================================================
