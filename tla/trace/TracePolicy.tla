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
(*                                                                         *)
(* The alloc rule a trace is checked against (spec/SPEC.md sections 13 and *)
(* 14) is the same for every policy: the doorkeeper, the contiguity loop,  *)
(* or both at once (tla/combined/, whose module extends both layers: the   *)
(* instance Rules), over the policy's hooks, bound by name.  With          *)
(* Contiguity = 0 there are no extra victims (the glue's alloc exactly);   *)
(* without Filtered there is no decline, and the door stays <<>>.  Its     *)
(* constants are set by the trace config, and these lines are the same in  *)
(* every generated TracePolicy.                                            *)
(***************************************************************************)
CONSTANTS Keys, N, MaxPins
VARIABLES entries, free, evictable, lastOp, policy
INSTANCE EmbeddingCacheFifo WITH Level <- "blocks"

CONSTANTS
    Contiguity,     \* the cache's contiguity (k); 0: evict only as needed
    Filtered,       \* TRUE iff the cache has the doorkeeper
    DoorCapacity    \* the doorkeeper's capacity (1 when not Filtered)
VARIABLE
    door            \* the doorkeeper's door (<<>> when not Filtered)
Rules == INSTANCE EmbeddingCacheAdmissionContiguity WITH Level <- "blocks"

\* All variables, written here (this TLC cannot evaluate UNCHANGED of a
\* tuple defined inside the instantiated module).
traceStateVars == <<entries, free, evictable, lastOp, policy, door>>
=============================================================================
