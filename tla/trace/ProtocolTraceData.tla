-------------------------- MODULE ProtocolTraceData --------------------------
(***************************************************************************)
(* Placeholder for the module the engine-trace tooling generates           *)
(* (embedding_cache_checker.verify.protocol_traces.trace_data): one        *)
(* recorded run of the real scheduler as the definition ProtocolTrace (its *)
(* steps as EmbeddingCacheProtocolTrace reads them), its items as          *)
(* TraceKeys and each item's size in blocks as TraceNeed.  This empty     *)
(* trace lets EmbeddingCacheProtocolTrace.tla be parsed on its own.       *)
(***************************************************************************)
EXTENDS Integers, TLC

TraceKeys == {"none"}                  \* Keys <- TraceKeys in the config
TraceNeed == [k \in TraceKeys |-> 1]   \* Need <- TraceNeed
ProtocolTrace == <<>>                  \* the steps, oldest first
=============================================================================
