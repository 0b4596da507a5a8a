--------------------- MODULE EmbeddingCacheProtocolTrace ---------------------
(***************************************************************************)
(* Trace validation of the engine's protocol: does a run of vLLM 0.33's   *)
(* real scheduler (its ECCPUScheduler, or the plugin's                    *)
(* VerifiedECCPUScheduler), recorded by the harness                       *)
(* (src/embedding_cache_checker/engine/), describe a behaviour of          *)
(* EmbeddingCacheProtocol with the scheduler's Order, and does that        *)
(* behaviour keep the protocol's properties (CheckedHitPinnedProp,         *)
(* SaveOfComputedProp, the cache invariants; the config lists them)?      *)
(*                                                                         *)
(* The record is the engine's events and the cache's calls, merged in the *)
(* order they happened (each event's cache_at), written by the tooling    *)
(* (verify/protocol_steps.py) as the definition ProtocolTrace of the      *)
(* generated module ProtocolTraceData: one step per protocol action, each *)
(* with the cache call it made (op, result, n; op "" for none) and the    *)
(* cache's state after it (post, counts level: sizes, not block ids).    *)
(*                                                                         *)
(*   act              recorded as                    the model's action    *)
(*   check            a request's Checked events    CheckVllm / CheckSafe  *)
(*   check_item       one Checked event             CheckPin (safe); vLLM: *)
(*                    (lease or pin_if_ready)       its answer, a query     *)
(*   produce          Updated: producer side        Produce                 *)
(*   load             Updated: consumer side        Load                    *)
(*   unschedule       Unscheduled (a miss); a       Unschedule              *)
(*                    release when the meta is built                        *)
(*   save_reported    Reported: a save              SaveDone / SaveFailed   *)
(*   load_reported    Reported: a load's last rank  LoadDone                *)
(*   save_dispatched  SaveDispatched                (the model's saving or  *)
(*   load_dispatched  LoadDispatched                 unmade, loads; no      *)
(*   step_end         StepEnded                      change: Idle at end)   *)
(*   gpu_free         GpuFreed (the real loop's      GpuDrop                 *)
(*                    free_encoder_mm_hashes)                               *)
(*   unexpected       a call the mapping places     none                    *)
(*                    nowhere                                               *)
(*                                                                         *)
(* Step i+1 is taken iff the model has that action from the current state,*)
(* the recorded call is the one the action makes (its result the one the  *)
(* model's state gives), and the successor's cache is the recorded one.   *)
(* An item the model has no producer (consumer) side for, in the order,   *)
(* must show no producer (consumer) call, and changes nothing.  TLC runs  *)
(* without deadlock checking: a trace the model cannot follow just ends,  *)
(* and TraceProgress prints how far it got; a property or invariant that  *)
(* fails stops TLC with the step that broke it (the state's i).           *)
(*                                                                         *)
(* SaveResolvesProp and LoadPinReleasedProp are liveness: a finite trace  *)
(* cannot violate them.  Their finite stand-ins hold at the trace's end   *)
(* (after the harness's drain delivered every report): SaveResolvedAtEndInv*)
(* and LoadPinReleasedAtEndInv.                                           *)
(***************************************************************************)
EXTENDS EmbeddingCacheProtocol, TLC, ProtocolTraceData

VARIABLE i   \* how many steps of ProtocolTrace have been matched

\* (Listed: TLC 2.15 cannot take UNCHANGED of a tuple that reached a module
\* through a bare INSTANCE; protocolVars is EmbeddingCacheProtocol's own.)
traceVars == <<entries, free, evictable, lastOp, policy, toCheck, toProduce,
               toLoad, computed, saving, unmade, loads, gpu, evicted, i>>

\* The step changes nothing of the protocol (a query, or a check of the record).
Stay == UNCHANGED protocolVars

\* The step made no call on the cache.
NoCall(t) == t.op = ""

\* The recorded call released one pin: a plain unpin or a lease's release.
Released(t) == \/ t.op = "unpin" /\ t.result = "ok"
               \/ t.op = "release_lease" /\ t.result = "true"

\* What the model's cache holds for item k, as a check reads it.
Found(k) == IF k \notin Live THEN "absent"
            ELSE IF entries[k].pins = NotReady THEN "not-ready" ELSE "hit"

\* The recorded answer of a check's call (lease or pin_if_ready), read alike.
Answer(t) == CASE t.result \in {"lease", "entry"}                     -> "hit"
               [] t.result \in {"not-ready-lease", "not-ready-entry"} -> "not-ready"
               [] t.result = "none"                                   -> "absent"
               [] OTHER                                               -> "error"

\* Does the model's successor hold the cache the code recorded after the step?
\* (Counts level: each entry's size and pins, the free blocks, fifo's queue.)
RecordedCache(p) ==
    /\ DOMAIN entries' = DOMAIN p.entries
    /\ \A k \in DOMAIN entries' :
           /\ entries'[k].pins = p.entries[k].pins
           /\ entries'[k].size = p.entries[k].blocks
    /\ free' = p.free
    /\ policy'.queue = p.queue
    /\ (\E k \in DOMAIN entries' : entries'[k].pins # 0) = p.held

-----------------------------------------------------------------------------
(* One recorded step as the model's action.                                *)

\* The request's items t.keys are checked (t.flag: the engine schedules it).
\* vLLM's check is has_cache_item, a query: a request it then does not
\* schedule made no call, changed nothing, and has no step in the model's
\* vllm order (which needs none).
\* With the GPU encoder cache, the checked items the model's gpu holds were
\* evicted at the step's start and are re-allocated (the recorded worker's
\* drops are gpu_free steps, so the model's gpu is the worker's).
CheckStep(t) ==
    /\ NoCall(t)
    /\ IF Order = "safe" THEN CheckSafeEvicting(t.keys, gpu \cap t.keys)
       ELSE IF t.flag THEN CheckVllmEvicting(t.keys, gpu \cap t.keys)
       ELSE Idle /\ t.keys \in Requests /\ Stay

\* Item t.key is checked; t.flag: the check answered True.  safe: the check
\* pins (a lease, at the counts level a pin) with CheckPin, and answers True
\* iff it holds one.  vllm: get + ready, a query, answered as the model's
\* cache holds the item.
CheckItemStep(t) ==
    IF Order = "vllm" \/ t.key \notin toCheck
    THEN /\ NoCall(t)
         /\ t.flag = (Consumer /\ Cached(t.key))
         /\ Stay
    ELSE /\ CheckPin(t.key)
         /\ t.op \in {"lease", "pin_if_ready"}
         /\ Answer(t) = Found(t.key)
         /\ t.flag = (Found(t.key) = "hit")

\* The producer side of item t.key: alloc if absent, the save dispatched.
ProduceStep(t) ==
    IF t.key \notin toProduce
    THEN NoCall(t) /\ Stay   \* none in the order (safe: a checked hit)
    ELSE /\ Produce(t.key)
         /\ CASE t.op = "alloc" /\ t.result = "not-ready-entry" ->
                     /\ t.key \notin Live /\ lastOp'.op = "Alloc"
                     /\ t.n = Need[t.key]
              [] t.op = "alloc" /\ t.result = "none" ->
                     /\ t.key \notin Live /\ lastOp'.op = "AllocFail"
                     /\ t.n = Need[t.key]
              \* get found it, or (KeepRule) the worker keeps it: nothing allocated
              [] NoCall(t) -> t.key \in Live \/ (KeepRule /\ t.key \notin Encoded)
              [] OTHER     -> FALSE

\* The consumer side of item t.key: vllm, get + ready + pin and the load
\* dispatched; safe, the load of a checked hit, under the check's pin.
LoadStep(t) ==
    IF t.key \notin toLoad
    THEN NoCall(t) /\ Stay   \* none in the order (safe: a computed item's get)
    ELSE /\ Load(t.key)
         /\ IF Order = "vllm" /\ PinIfReadyHits(t.key)
               THEN t.op = "pin" /\ t.result = "ok"
               ELSE NoCall(t)

\* Item t.key is not scheduled after its check: a miss (Unscheduled), or a
\* hit whose check pin is released when the step's meta is built.
UnscheduleStep(t) ==
    IF Order = "vllm" \/ t.key \notin toLoad \cup toProduce
    THEN NoCall(t) /\ Stay   \* vllm: the check held nothing; safe: nothing to undo
    ELSE /\ Unschedule(t.key)
         /\ IF t.key \in toLoad THEN Released(t) ELSE NoCall(t)

\* The worker reported the save of t.key: the producer marks it ready (or,
\* failed, discards it).  A reported save the engine made no call for is no
\* step: in the model its entry is not ready, so the call is due.
SaveReportedStep(t) ==
    CASE t.op = "mark_ready" /\ t.result = "ok" -> SaveDone(t.key)
      [] t.op = "discard" /\ t.result = "ok"    -> SaveFailed(t.key)
      [] OTHER                                  -> FALSE

\* Every rank reported the load of t.key: the consumer releases its pin.
LoadReportedStep(t) == Released(t) /\ LoadDone(t.key)

\* The step's meta holds a save of t.key (t.flag: the engine computed it):
\* the model dispatched it, with the alloc of its producer side.
SaveDispatchedStep(t) ==
    NoCall(t) /\ t.key \in (IF t.flag THEN saving ELSE unmade) /\ Stay

\* The step's meta holds a load of t.key: the engine holds its pin.
LoadDispatchedStep(t) == NoCall(t) /\ loads[t.key] = 1 /\ Stay

\* The scheduler step ended: every request's calls are done.
StepEndStep(t) == NoCall(t) /\ Idle /\ Stay

\* The step's free_encoder_mm_hashes held t.key: the worker drops it (an
\* item the model's gpu never held: nothing to drop).
GpuFreeStep(t) ==
    /\ NoCall(t)
    /\ IF t.key \in gpu THEN GpuDrop(t.key) ELSE Idle /\ Stay

StepOf(t) ==
    CASE t.act = "check"           -> CheckStep(t)
      [] t.act = "check_item"      -> CheckItemStep(t)
      [] t.act = "produce"         -> ProduceStep(t)
      [] t.act = "load"            -> LoadStep(t)
      [] t.act = "unschedule"      -> UnscheduleStep(t)
      [] t.act = "save_reported"   -> SaveReportedStep(t)
      [] t.act = "load_reported"   -> LoadReportedStep(t)
      [] t.act = "save_dispatched" -> SaveDispatchedStep(t)
      [] t.act = "load_dispatched" -> LoadDispatchedStep(t)
      [] t.act = "step_end"        -> StepEndStep(t)
      [] t.act = "gpu_free"        -> GpuFreeStep(t)
      [] OTHER                     -> FALSE   \* "unexpected": no action makes it

-----------------------------------------------------------------------------

ProtocolTraceInit == ProtocolInit /\ i = 0

ProtocolTraceNext ==
    \/ /\ i < Len(ProtocolTrace)
       /\ LET t == ProtocolTrace[i + 1]   \* evaluated once per step
          IN  StepOf(t) /\ RecordedCache(t.post)
       /\ i' = i + 1
    \/ /\ i = Len(ProtocolTrace)            \* accepted: stutter, no deadlock
       /\ UNCHANGED traceVars

ProtocolTraceSpec == ProtocolTraceInit /\ [][ProtocolTraceNext]_traceVars

\* The whole record has been matched (the harness drained every report).
Ended == i = Len(ProtocolTrace)

\* SaveResolvesProp's stand-in: at the end, every not-ready entry has a save
\* in flight that the worker makes (none was dispatched for an output never
\* computed, which nobody will ever mark ready or discard).
SaveResolvedAtEndInv ==
    Ended => \A k \in Live : entries[k].pins = NotReady => k \in saving

\* LoadPinReleasedProp's stand-in: at the end, the engine holds no pin.
LoadPinReleasedAtEndInv == Ended => \A k \in Keys : loads[k] = 0

\* Checked as an invariant only to print how far the trace got (PrintT is
\* TRUE): a trace the model cannot follow is rejected at the step after the
\* largest printed i.
TraceProgress == PrintT(<<"trace", 1, i>>)
=============================================================================
