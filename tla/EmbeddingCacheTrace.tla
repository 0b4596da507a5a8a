------------------------- MODULE EmbeddingCacheTrace -------------------------
(***************************************************************************)
(* Trace validation: does a trace recorded from the Python cache           *)
(* (embedding_cache.tracing.TracedEmbeddingCache) describe a behaviour of  *)
(* EmbeddingCache?  In the style of BlockingQueueTrace / EWD998ChanTrace,  *)
(* adapted to this TLC build (no Json/IOUtils: the trace is written into a *)
(* generated module as the constant Trace).                                *)
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
(* TLC explores a single path.  It reports a deadlock iff the trace is     *)
(* rejected; the deadlocked state's i is the number of accepted steps.     *)
(***************************************************************************)
EXTENDS EmbeddingCache, TLC

CONSTANT
    Trace       \* the recorded steps: a sequence of records (see above)

VARIABLE
    i           \* how many steps of Trace have been matched

traceVars == <<vars, i>>

\* Does the spec's successor state match the abstract state the code recorded?
PostMatches(p) ==
    /\ DOMAIN entries' = DOMAIN p.entries
    /\ \A k \in DOMAIN entries' :
           /\ entries'[k].pins = p.entries[k].pins
           /\ Cardinality(entries'[k].blocks) = p.entries[k].blocks
    /\ queue' = p.queue
    /\ Cardinality(free') = p.free
    /\ (\E k \in DOMAIN entries' : entries'[k].pins # 0) = p.held

\* The spec's guard for an operation is false: the code must refuse the call.
\* (IF, not \/: inside an action TLC explores both sides of a disjunction.)
Forbidden(t) ==
    IF t.op = "alloc" THEN t.key \in Live \/ t.n > N
    ELSE IF t.key \notin Live THEN t.op # "pin_if_ready"
    ELSE LET p == entries[t.key].pins
         IN  CASE t.op = "mark_ready" -> p # NotReady
               [] t.op = "pin"        -> p < 0
               [] t.op = "unpin"      -> p <= 0
               [] t.op = "discard"    -> p # NotReady
               [] OTHER               -> FALSE   \* pin_if_ready never refuses

\* The errors that mean "the key has no live entry".
AbsentErrors == {"UnknownKeyError"}

\* One recorded step as a spec step.
StepMatches(t) ==
    CASE t.result \in {"ok", "entry", "not-ready-entry", "none"} ->
            CASE t.op = "alloc" /\ t.result # "none" -> Alloc(t.key, t.n, t.blocks)
              [] t.op = "alloc"        -> AllocFail(t.key, t.n)
              [] t.op = "mark_ready"   -> MarkReady(t.key)
              [] t.op = "pin"          -> Pin(t.key)
              [] t.op = "pin_if_ready" ->
                     /\ PinIfReady(t.key)
                     /\ t.result = IF t.key \notin Live THEN "none"
                                   ELSE IF entries[t.key].pins < 0
                                        THEN "not-ready-entry" ELSE "entry"
              [] t.op = "unpin"        -> Unpin(t.key)
              [] t.op = "discard"      -> Discard(t.key)
              [] OTHER                 -> FALSE
      [] OTHER ->   \* the call raised t.result
            /\ Forbidden(t)
            /\ (t.result \in AbsentErrors) = (t.key \notin Live)
            /\ UNCHANGED vars

TraceInit ==
    /\ Init
    /\ i = 0

TraceNext ==
    \/ /\ i < Len(Trace)
       /\ StepMatches(Trace[i + 1])
       /\ PostMatches(Trace[i + 1].post)
       /\ i' = i + 1
    \/ /\ i = Len(Trace)            \* accepted: stutter so TLC sees no deadlock
       /\ UNCHANGED traceVars

TraceSpec == TraceInit /\ [][TraceNext]_traceVars

\* Checked as an invariant only to make TLC print how far it got.
TraceProgress == i \in 0 .. Len(Trace)
=============================================================================
