----------------------------- MODULE TracePolicy -----------------------------
(***************************************************************************)
(* The policy a trace is checked against (EmbeddingCacheTrace extends this *)
(* module).  This file selects fifo, the default; the trace tooling        *)
(* (verify/traces.py) writes the traced policy's one next to its copy of   *)
(* the modules: its constants are Keys, N, MaxPins and the policy's own    *)
(* (the names its manifest entries' policy_params set), its INSTANCE the   *)
(* policy's module, e.g. for gdsf:                                         *)
(*   CONSTANTS Keys, N, MaxPins, Scale, MaxFreq                            *)
(*   VARIABLES entries, free, evictable, lastOp, policy                    *)
(*   INSTANCE EmbeddingCacheGdsf WITH Level <- "blocks"                    *)
(*   traceStateVars == <<entries, free, evictable, lastOp, policy>>        *)
(* Every policy has the one variable policy (a record of its variables),   *)
(* so only the module and the constants differ.  Traces are block level,   *)
(* so Level is fixed here and the trace config need not set it.            *)
(***************************************************************************)
CONSTANTS Keys, N, MaxPins
VARIABLES entries, free, evictable, lastOp, policy
INSTANCE EmbeddingCacheFifo WITH Level <- "blocks"

\* All variables, written here (this TLC cannot evaluate UNCHANGED of a
\* tuple defined inside the instantiated module).
traceStateVars == <<entries, free, evictable, lastOp, policy>>
=============================================================================
