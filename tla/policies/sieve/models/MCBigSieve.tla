----------------------------- MODULE MCBigSieve -----------------------------
(***************************************************************************)
(* Big model of the sieve policy, not in the default run (default_run      *)
(* false in models.json): minutes in one process; run it by name, with the *)
(* tag big, or distributed (the nightly profile). Counts level, 4 keys, 6  *)
(* blocks, pin depth 2, with the ghosts stamp, gclock, used and ghand,     *)
(* explored modulo key renaming (QuotientView, through BigView).           *)
(* Expected: pass.                                                         *)
(***************************************************************************)
EXTENDS EmbeddingCacheSieveCheck, EmbeddingCacheBig

\* QuotientView, the whole state evaluated first (EmbeddingCacheBig).
BigView == Evaluated(checkVars, QuotientView)
=============================================================================
