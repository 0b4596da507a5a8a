----------------------------- MODULE MCBigGdsf -----------------------------
(***************************************************************************)
(* Big model of the gdsf policy, not in the default run (default_run false *)
(* in models.json): minutes in one process; run it by name, with the tag   *)
(* big, or distributed (the nightly profile). Counts level, 4 keys, 10     *)
(* blocks, pin depth 2, Scale 2, MaxFreq 2, with the ghost lastVictimPrio, *)
(* explored modulo key renaming and the clock shift (QuotientView, through *)
(* BigView). Expected: pass.                                               *)
(***************************************************************************)
EXTENDS EmbeddingCacheGdsfCheck, EmbeddingCacheBig

\* QuotientView, the whole state evaluated first (EmbeddingCacheBig).
BigView == Evaluated(checkVars, QuotientView)
=============================================================================
