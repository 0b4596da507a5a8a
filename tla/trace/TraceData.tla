------------------------------ MODULE TraceData ------------------------------
(***************************************************************************)
(* Placeholder for the module the trace tooling generates                 *)
(* (embedding_cache_checker.verify.traces.trace_module): a batch of       *)
(* recorded traces as the definition Traces, and the keys they use as     *)
(* TraceKeys.  This batch of one empty trace lets EmbeddingCacheTrace.tla  *)
(* be parsed and checked on its own.                                       *)
(***************************************************************************)
EXTENDS Integers, TLC

TraceKeys == {"none"}   \* the keys of the trace (Keys <- TraceKeys in the config)
Traces == << <<>> >>    \* the batch: each trace's recorded steps, oldest first
=============================================================================
