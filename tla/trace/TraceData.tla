------------------------------ MODULE TraceData ------------------------------
(***************************************************************************)
(* Placeholder for the module the trace tooling generates                 *)
(* (embedding_cache_checker.verify.traces.trace_module): the recorded steps as the *)
(* definition Trace, and the keys they use as TraceKeys.  This empty trace *)
(* lets EmbeddingCacheTrace.tla be parsed and checked on its own.          *)
(***************************************************************************)
EXTENDS Integers, TLC

TraceKeys == {"none"}   \* the keys of the trace (Keys <- TraceKeys in the config)
Trace == <<>>           \* the recorded steps, oldest first
=============================================================================
