------------------------- MODULE EmbeddingCacheTrace -------------------------
(***************************************************************************)
(* Trace validation: does a trace recorded from the Python cache           *)
(* (embedding_cache_checker.tracing.TracedEmbeddingCache) describe a behaviour of  *)
(* the cache with the policy TracePolicy selects (fifo by default)?       *)
(* In the style of BlockingQueueTrace / EWD998ChanTrace, adapted to this  *)
(* TLC build (no Json/IOUtils): the trace is the                          *)
(* definition Traces of module TraceData (a batch of traces), which the   *)
(* trace tooling generates next to a copy of this module                  *)
(* (tla/TraceData.tla is a placeholder holding one empty trace).  A        *)
(* definition, not a CONSTANT bound with <-, because TLC evaluates a       *)
(* definition once but a substituted constant at every use.  One TLC run  *)
(* checks the whole batch: the initial state picks a trace (tr), so the   *)
(* batch's traces are followed side by side, and one JVM start serves     *)
(* them all.                                                               *)
(*                                                                         *)
(* Each trace step names the operation, its arguments, its result (or the  *)
(* error it raised), for alloc the block ids the code chose, and the       *)
(* abstract state right after it.  Step i+1 is accepted iff the spec has   *)
(* the matching action from the current state (for alloc: taking exactly  *)
(* the recorded blocks, which must be free or freed by eviction) and its   *)
(* successor matches the recorded abstract state; a step that raised is    *)
(* accepted iff the spec's guard for that operation is false (the code     *)
(* refused what the spec forbids) and nothing changed.                     *)
(*                                                                         *)
(* TLC explores a single path per trace and runs without deadlock         *)
(* checking (a rejected trace's path just ends).  The invariant            *)
(* TraceProgress prints <<"trace", tr, i>> for every state it reaches, so  *)
(* a trace is accepted iff some printed i is its length; otherwise its     *)
(* largest printed i is the number of steps accepted before the first the *)
(* spec could not take.                                                    *)
(***************************************************************************)
EXTENDS TracePolicy, TLC, TraceData   \* TraceData defines Traces, TraceKeys

VARIABLES
    tr,         \* which trace of the batch Traces this path follows
    i           \* how many steps of that trace have been matched

\* The trace this path follows.
Trace == Traces[tr]

\* (traceStateVars, not fullVars: TracePolicy.tla says why.)
traceVars == <<traceStateVars, i, tr>>

\* Does the spec's successor state match the abstract state the code recorded?
PostMatches(p) ==
    /\ door' = p.door
    /\ DOMAIN entries' = DOMAIN p.entries
    /\ \A k \in DOMAIN entries' :
           /\ entries'[k].pins = p.entries[k].pins
           /\ Cardinality(entries'[k].blocks) = p.entries[k].blocks
    /\ \A v \in DOMAIN policy' : policy'[v] = p[v]   \* each policy field, by name
    /\ Cardinality(free') = p.free
    /\ (\E k \in DOMAIN entries' : entries'[k].pins # 0) = p.held

\* The error the code must raise when the spec's guard for t's operation is
\* false (spec/SPEC.md, section 7: alloc checks duplicates before capacity),
\* or "none" when the spec has a step for it.  IF, not \/: inside an action
\* TLC explores both sides of a disjunction.
ExpectedError(t) ==
    IF t.op = "alloc"
    THEN IF t.key \in Live THEN "DuplicateAllocError"
         ELSE IF t.n > N THEN "CapacityError" ELSE "none"
    ELSE IF t.op = "pin_if_ready" THEN "none"
    ELSE IF t.key \notin Live THEN "UnknownKeyError"
    ELSE LET p == entries[t.key].pins
         IN  CASE t.op = "mark_ready" /\ p # NotReady -> "AlreadyReadyError"
               [] t.op = "pin"        /\ p < 0        -> "NotReadyError"
               [] t.op = "unpin"      /\ p <= 0       -> "NotPinnedError"
               [] t.op = "discard"    /\ p # NotReady -> "DiscardHeldError"
               [] OTHER                               -> "none"

\* alloc(k, n) that took blocks, under the trace's rule: the doorkeeper let
\* it through (spec/SPEC.md section 13), the contiguity loop evicted
\* (section 14; with Contiguity = 0, the glue's alloc), or both: the
\* doorkeeper let it through to the contiguity loop (section 14.1).
RuleTakes(k, n) ==
    IF Filtered
    THEN IF Contiguity = 0 THEN Rules!AdmitAlloc(k, n) ELSE Rules!AdmitContiguousAlloc(k, n)
    ELSE IF Contiguity = 0 THEN CacheAlloc(k, n) /\ UNCHANGED door
    ELSE Rules!ContiguousCacheAlloc(k, n) /\ UNCHANGED door

\* alloc(k, n) that returned None: the doorkeeper declined it (with or
\* without contiguity: a decline evicts nothing), or it is short (the core's
\* fail-fast).  IF: the two are disjoint (a decline would evict).
RuleReturnsNone(k, n) ==
    IF Filtered /\ Rules!Declines(k, n) THEN Rules!DeclineAlloc(k, n)
    ELSE CacheAllocFail(k, n) /\ UNCHANGED door

\* One recorded step as a spec step.
StepMatches(t) ==
    CASE t.result \in {"ok", "entry", "not-ready-entry", "none"} ->
            CASE t.op = "alloc" /\ t.result = "not-ready-entry" ->   \* starts not-ready
                     /\ RuleTakes(t.key, t.n)
                     /\ entries'[t.key].blocks = t.blocks   \* the blocks the code took
              [] t.op = "alloc" /\ t.result = "none" -> RuleReturnsNone(t.key, t.n)
              [] t.op = "mark_ready" /\ t.result = "ok" ->
                     CacheMarkReady(t.key) /\ UNCHANGED door
              [] t.op = "pin" /\ t.result = "ok"        -> CachePin(t.key) /\ UNCHANGED door
              [] t.op = "pin_if_ready" ->
                     /\ CachePinIfReady(t.key)
                     /\ UNCHANGED door
                     /\ t.result = IF t.key \notin Live THEN "none"
                                   ELSE IF entries[t.key].pins < 0
                                        THEN "not-ready-entry" ELSE "entry"
              [] t.op = "unpin" /\ t.result = "ok"      -> CacheUnpin(t.key) /\ UNCHANGED door
              [] t.op = "discard" /\ t.result = "ok"    ->
                     CacheDiscard(t.key) /\ UNCHANGED door
              [] OTHER                 -> FALSE
      [] OTHER ->   \* the call raised t.result: the spec forbids it, nothing changes
            /\ t.result = ExpectedError(t)
            /\ t.result # "none"
            /\ UNCHANGED traceStateVars

TraceInit ==
    /\ CacheInit
    /\ door = <<>>
    /\ tr \in DOMAIN Traces
    /\ i = 0

TraceNext ==
    \/ /\ i < Len(Trace)
       /\ LET t == Trace[i + 1]   \* evaluated once per step (LET values are cached)
          IN  /\ StepMatches(t)
              /\ PostMatches(t.post)
       /\ i' = i + 1
       /\ UNCHANGED tr
    \/ /\ i = Len(Trace)            \* accepted: stutter so TLC sees no deadlock
       /\ UNCHANGED traceVars

TraceSpec == TraceInit /\ [][TraceNext]_traceVars

\* Checked as an invariant only to make TLC print how far each trace got
\* (PrintT is TRUE): the verdicts are read from these lines.
TraceProgress == PrintT(<<"trace", tr, i>>)
=============================================================================
