----------------------- MODULE EmbeddingCacheProtocol -----------------------
(***************************************************************************)
(* A serving engine's scheduler protocol over the cache (fifo), the way  *)
(* spec/PROTOCOLS.md states it.  The items are the cache's keys; Need[k]  *)
(* is the size of item k's encoder output in blocks.                     *)
(*                                                                         *)
(* The engine takes one request at a time.  Its scheduler step checks    *)
(* the request's items (which are cached: present and ready) and then    *)
(* makes its calls on the cache in its order; nothing else touches the   *)
(* cache during the step (the worker's reports are handled between       *)
(* steps), so the step is a run of engine actions with the worker's     *)
(* actions disabled, one cache call per action (each a Cache* action of  *)
(* the glue: lastOp records it).  The worker completes the transfers    *)
(* later: a save it made ends in mark_ready (or, failed, in discard); a  *)
(* load, done or failed, ends in the consumer's unpin.                   *)
(*                                                                         *)
(* The worker (vLLM 0.33's ECCPUWorker.save_caches): a save is made only *)
(* for an encoder output the model runner computed in the step whose     *)
(* metadata dispatched it.  A save dispatched for an item not computed   *)
(* in that step is never made and never reported: its entry stays        *)
(* not-ready for good (unmade).  With GpuCache (below), computed is not   *)
(* enough: the worker makes the save iff it encodes the item (Encoded).   *)
(*                                                                         *)
(* The instance's Roles: "producer" (alloc if the key is absent, the save *)
(* dispatched, mark_ready when the worker reports), "consumer" (loads the *)
(* checked hits: pin, the load dispatched, unpin when the worker         *)
(* reports), or both.                                                     *)
(*                                                                         *)
(* Order = "vllm", vLLM 0.33's order: the check is has_cache_item (get + *)
(* ready) per item, a query; then update_state_after_alloc per item, the *)
(* computed items first and then the loaded ones, each running the       *)
(* producer side (alloc if get is None; on success the save dispatched)  *)
(* and then the consumer side (get, ready, pin and the load dispatched:  *)
(* in one scheduler step that is pin_if_ready's state change).  The     *)
(* alloc of a computed item may evict a checked hit: its producer side   *)
(* then allocs it again, not-ready, with a save that is never made, and  *)
(* its consumer side loads nothing.                                      *)
(* Order = "safe", the plugin's protocol: the check pins each hit        *)
(* (pin_if_ready; a lease, at the counts level a pin); the producer side *)
(* runs for the computed items only; then the hits' loads are           *)
(* dispatched.  A request the engine does not schedule after its check  *)
(* (Unschedule) releases its check pins before the step ends, and its   *)
(* misses are not computed.                                               *)
(*                                                                         *)
(* GpuCache (opt-in; FALSE: none of the below, gpu and evicted stay {}): *)
(* vLLM's GPU encoder cache (EncoderCacheManager), whose items' outputs  *)
(* the worker holds (gpu).  At a step's start the scheduler may evict    *)
(* any of them (any subset: a superset of can_allocate's choices); the   *)
(* request's items still held are served by it (check_and_update_cache: *)
(* no check, no compute, no load), the others run the step as above, an  *)
(* evicted one too; every item the step schedules is held after it.  The *)
(* worker drops only the evicted items not re-allocated in the pass       *)
(* (get_freed_mm_hashes), encodes only the items it does not hold, and   *)
(* saves only those: an item evicted and re-allocated as computed is     *)
(* kept, not encoded, so a save dispatched for it is never made (unmade: *)
(* the leak).  KeepRule (the safe order only, the plugin's rule): the    *)
(* producer side runs only for an item the worker encodes; for an item  *)
(* it keeps, no alloc and no save.                                        *)
(*                                                                         *)
(* Bound of the model: the engine holds at most one pin per item (a      *)
(* request names no item whose load is still in flight), so MaxPins = 1  *)
(* suffices and a pin is identified by its item (LoadPinReleasedProp).   *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifo   \* the engine over the fifo policy (the default)

CONSTANTS
    Need,       \* Need[k]: the blocks of item k's encoder output
    Roles,      \* the instance's roles: a non-empty subset of Role
    MaxItems,   \* the most items a request has
    Order,      \* the engine's order of calls: "vllm" or "safe"
    GpuCache,   \* TRUE: the engine has vLLM's GPU encoder cache (gpu)
    KeepRule    \* TRUE: the safe order's producer side skips the items the worker keeps

Role == {"producer", "consumer"}

ASSUME ProtocolAssumption ==
    /\ Need \in [Keys -> 1 .. N]
    /\ Roles \subseteq Role /\ Roles # {}
    /\ MaxItems \in 1 .. Cardinality(Keys)
    /\ Order \in {"vllm", "safe"}
    /\ GpuCache \in BOOLEAN /\ KeepRule \in BOOLEAN
    /\ KeepRule => GpuCache /\ Order = "safe"

Producer == "producer" \in Roles
Consumer == "consumer" \in Roles

VARIABLES
    toCheck,    \* safe order: the request's items still to check (pin_if_ready)
    toProduce,  \* the items whose producer side is still to run (alloc if absent)
    toLoad,     \* the items whose consumer side is still to run: vllm, every
                \* item of the request; safe, the checked hits (pinned)
    computed,   \* the items whose output the current step computes (its misses)
    saving,     \* the saves in flight that the worker makes (of encoded items)
    unmade,     \* the saves dispatched for items not encoded: never made
    loads,      \* loads[k] = 1: the engine holds a pin on k (the check's, the load's)
    gpu,        \* GpuCache: the items whose encoder outputs the worker holds (the
                \* scheduler's GPU encoder cache mirrors it), updated as it allocates
    evicted     \* GpuCache: the current step's items evicted from gpu at its start
                \* (the request's; forgotten when the step ends)

engineVars == <<toCheck, toProduce, toLoad, computed, saving, unmade, loads, gpu, evicted>>
\* (Listed, not <<fullVars, ...>>: TLC 2.15 cannot evaluate UNCHANGED of a
\* tuple that reached this module through a bare INSTANCE.)
cacheCallVars == <<entries, free, evictable, lastOp, policy>>
protocolVars  == <<entries, free, evictable, lastOp, policy,
                   toCheck, toProduce, toLoad, computed, saving, unmade, loads,
                   gpu, evicted>>

ProtocolTypeOK ==
    /\ TypeOK
    /\ PolicyTypeOK
    /\ {toCheck, toProduce, toLoad, computed, saving, unmade} \subseteq SUBSET Keys
    /\ loads \in [Keys -> 0 .. 1]
    /\ {gpu, evicted} \subseteq SUBSET Keys

\* The check's answer for item k: get(k) returns an entry and it is ready.
Cached(k) == k \in Live /\ entries[k].pins >= 0

\* The engine is between scheduler steps.
Idle == toCheck = {} /\ toProduce = {} /\ toLoad = {}

\* The requests the engine may take: 1 .. MaxItems items, none with its load
\* still in flight (the model's bound, above).
Requests == {R \in SUBSET Keys : /\ R # {}
                                 /\ Cardinality(R) <= MaxItems
                                 /\ \A k \in R : loads[k] = 0}

ProtocolInit ==
    /\ CacheInit
    /\ toCheck = {} /\ toProduce = {} /\ toLoad = {} /\ computed = {}
    /\ saving = {} /\ unmade = {}
    /\ loads = [k \in Keys |-> 0]
    /\ gpu = {} /\ evicted = {}

-----------------------------------------------------------------------------
(* The engine's scheduler step.                                            *)

\* GpuCache: the items of request R the step runs once E was evicted from
\* gpu: the others are served by the GPU encoder cache.  (Without it, R.)
GpuMisses(R, E) == R \ (gpu \ E)

\* GpuCache: the step's start evicts E (of gpu) and allocates every item of
\* R; a worker drops the evicted items not re-allocated.
UpdateGpu(R, E) ==
    /\ gpu'     = IF GpuCache THEN (gpu \ E) \cup R ELSE gpu
    /\ evicted' = IF GpuCache THEN E \cap R ELSE evicted

\* evicted is read inside its step only: the call that ends the step forgets
\* it (fewer states; without GpuCache it stays {}).  The last conjunct of a
\* call (TLC reads toCheck', toProduce' and toLoad').
ForgetEvicted ==
    evicted' = IF toCheck' \cup toProduce' \cup toLoad' = {} THEN {} ELSE evicted

\* The items whose output the worker encodes in the current step: the
\* computed ones it does not hold (an item evicted from gpu and re-allocated
\* in the same pass is kept: not encoded).  Without GpuCache, computed.
Encoded == computed \ evicted

\* vLLM's check, E the items evicted from gpu at the step's start (a
\* recorded trace names them: tla/trace/EmbeddingCacheProtocolTrace.tla):
\* has_cache_item (get + ready) per item, a query of the cache; then
\* update_state_after_alloc for every item.
CheckVllmEvicting(R, E) ==
    /\ Order = "vllm"
    /\ Idle
    /\ R \in Requests
    /\ E \subseteq gpu
    /\ LET S    == GpuMisses(R, E)
           hits == IF Consumer THEN {k \in S : Cached(k)} ELSE {}
       IN  /\ computed'  = S \ hits
           /\ toProduce' = IF Producer THEN S ELSE {}
           /\ toLoad'    = IF Consumer THEN S ELSE {}
           /\ UpdateGpu(R, E)
    /\ UNCHANGED <<toCheck, saving, unmade, loads>>
    /\ UNCHANGED cacheCallVars

\* vLLM's check, evicting any E of gpu.
CheckVllm(R) == \E E \in SUBSET gpu : CheckVllmEvicting(R, E)

\* The safe order's step starts, E evicted from gpu at its start: a consumer
\* checks each item by pinning it.
CheckSafeEvicting(R, E) ==
    /\ Order = "safe"
    /\ Idle
    /\ R \in Requests
    /\ E \subseteq gpu
    /\ LET S == GpuMisses(R, E)
       IN  /\ toCheck'   = IF Consumer THEN S ELSE {}
           /\ computed'  = IF Consumer THEN {} ELSE S
           /\ toProduce' = IF Consumer \/ ~Producer THEN {} ELSE S
           /\ UpdateGpu(R, E)
    /\ UNCHANGED <<toLoad, saving, unmade, loads>>
    /\ UNCHANGED cacheCallVars

\* The safe order's step starts, evicting any E of gpu.
CheckSafe(R) == \E E \in SUBSET gpu : CheckSafeEvicting(R, E)

\* The safe check of item k: pin_if_ready(k); a hit holds its pin for the
\* load, a miss is computed (and saved by a producer).
CheckPin(k) ==
    /\ k \in toCheck
    /\ toCheck' = toCheck \ {k}
    /\ CachePinIfReady(k)
    /\ IF PinIfReadyHits(k)
          THEN /\ loads'  = [loads EXCEPT ![k] = 1]
               /\ toLoad' = toLoad \cup {k}
               /\ UNCHANGED <<computed, toProduce>>
          ELSE /\ computed'  = computed \cup {k}
               /\ toProduce' = IF Producer THEN toProduce \cup {k} ELSE toProduce
               /\ UNCHANGED <<loads, toLoad>>
    /\ UNCHANGED <<saving, unmade>>
    /\ UNCHANGED gpu /\ ForgetEvicted

\* vllm order: the items whose update_state_after_alloc has not finished.
Rest == toProduce \cup toLoad

\* vllm order: the item whose producer side ran and whose consumer side has
\* not yet (at most one: an item's update runs to its end before the next).
Begun == IF Producer THEN toLoad \ toProduce ELSE {}

\* vllm order: item k may be updated next; the computed items come first.
NextInOrder(k) == k \in computed \/ computed \cap Rest = {}

\* The producer side of item k: alloc if get(k) is None, and on success the
\* save dispatched (made by the worker iff it encodes k in this step);
\* alloc returning None saves nothing.  KeepRule: nothing for an item the
\* worker does not encode (it keeps it).
Produce(k) ==
    /\ toCheck = {}
    /\ k \in toProduce
    /\ Order = "vllm" => Begun = {} /\ NextInOrder(k)
    /\ toProduce' = toProduce \ {k}
    /\ IF k \in Live \/ (KeepRule /\ k \notin Encoded)
          THEN UNCHANGED <<entries, free, evictable, lastOp, policy, saving, unmade>>
          ELSE \/ /\ CacheAlloc(k, Need[k])
                  /\ IF k \in Encoded
                        THEN saving' = saving \cup {k} /\ UNCHANGED unmade
                        ELSE unmade' = unmade \cup {k} /\ UNCHANGED saving
               \/ CacheAllocFail(k, Need[k]) /\ UNCHANGED <<saving, unmade>>
    /\ UNCHANGED <<toCheck, toLoad, computed, loads>>
    /\ UNCHANGED gpu /\ ForgetEvicted

\* The consumer side of item k.  vllm: get, ready, pin and the load
\* dispatched (pin_if_ready's state change); an item found absent or not
\* ready is loaded by no one.  safe: k, a checked hit, was pinned by the
\* check; its load is dispatched after the producer side.
Load(k) ==
    /\ toCheck = {}
    /\ k \in toLoad \ toProduce
    /\ IF Order = "vllm"
          THEN /\ Producer \/ NextInOrder(k)
               /\ CachePinIfReady(k)
               /\ loads' = [loads EXCEPT ![k] = IF PinIfReadyHits(k) THEN 1 ELSE 0]
          ELSE /\ toProduce = {}
               /\ UNCHANGED <<entries, free, evictable, lastOp, policy, loads>>
    /\ toLoad' = toLoad \ {k}
    /\ UNCHANGED <<toCheck, toProduce, computed, saving, unmade>>
    /\ UNCHANGED gpu /\ ForgetEvicted

\* safe order: the engine does not schedule item k after its check (vLLM may
\* check a request's items and then not schedule it): a hit's check pin is
\* released before the step ends, a miss is not computed; with GpuCache, k
\* is not held after the step (evicted at its start, the worker drops it).
Unschedule(k) ==
    /\ Order = "safe"
    /\ toCheck = {}
    /\ k \in toLoad \cup toProduce
    /\ IF k \in toLoad
          THEN /\ CacheUnpin(k)
               /\ loads'  = [loads EXCEPT ![k] = 0]
               /\ toLoad' = toLoad \ {k}
               /\ UNCHANGED <<toProduce, computed>>
          ELSE /\ toProduce' = toProduce \ {k}
               /\ computed'  = computed \ {k}
               /\ UNCHANGED <<entries, free, evictable, lastOp, policy, loads, toLoad>>
    /\ gpu' = gpu \ {k}
    /\ UNCHANGED <<toCheck, saving, unmade>>
    /\ ForgetEvicted

\* Any call of the engine inside a started step.
EngineCall ==
    \E k \in Keys : CheckPin(k) \/ Produce(k) \/ Load(k) \/ Unschedule(k)

-----------------------------------------------------------------------------
(* The worker's reports, handled between scheduler steps.  Only the saves *)
(* it made (saving) are reported; an unmade save never is.                 *)

\* The save of k completed: the producer marks the entry ready.
SaveDone(k) ==
    /\ Idle
    /\ k \in saving
    /\ CacheMarkReady(k)
    /\ saving' = saving \ {k}
    /\ UNCHANGED <<toCheck, toProduce, toLoad, computed, unmade, loads, gpu, evicted>>

\* The save of k failed: the producer discards the not-ready entry.
SaveFailed(k) ==
    /\ Idle
    /\ k \in saving
    /\ CacheDiscard(k)
    /\ saving' = saving \ {k}
    /\ UNCHANGED <<toCheck, toProduce, toLoad, computed, unmade, loads, gpu, evicted>>

\* The load of k completed or failed: either way the consumer unpins.
LoadDone(k) ==
    /\ Idle
    /\ loads[k] = 1
    /\ CacheUnpin(k)
    /\ loads' = [loads EXCEPT ![k] = 0]
    /\ UNCHANGED <<toCheck, toProduce, toLoad, computed, saving, unmade, gpu, evicted>>

\* GpuCache: between steps the worker drops item k (the GPU encoder cache
\* evicted it in a pass whose request vLLM then did not schedule, or one
\* that did not re-allocate it: free_encoder_mm_hashes).
GpuDrop(k) ==
    /\ GpuCache
    /\ Idle
    /\ k \in gpu
    /\ gpu' = gpu \ {k}
    /\ UNCHANGED <<toCheck, toProduce, toLoad, computed, saving, unmade, loads, evicted>>
    /\ UNCHANGED cacheCallVars

ProtocolNext ==
    \/ \E R \in SUBSET Keys : CheckVllm(R) \/ CheckSafe(R)
    \/ EngineCall
    \/ \E k \in Keys : SaveDone(k) \/ SaveFailed(k) \/ LoadDone(k) \/ GpuDrop(k)

-----------------------------------------------------------------------------
(* Fairness: on finishing work only, none on starting a request.           *)

\* A started scheduler step runs to its end.
EngineFinishFairness == WF_protocolVars(EngineCall)

\* A save the worker makes is reported, done or failed.  Strong: the
\* reports are handled between steps, so an engine that keeps scheduling
\* enables them only intermittently.
SaveReportFairness == \A k \in Keys : SF_protocolVars(SaveDone(k) \/ SaveFailed(k))

\* A dispatched load is reported and its pin released (strong, as above).
LoadReleaseFairness == \A k \in Keys : SF_protocolVars(LoadDone(k))

ProtocolSafety == ProtocolInit /\ [][ProtocolNext]_protocolVars

ProtocolSpec ==
    /\ ProtocolSafety
    /\ EngineFinishFairness
    /\ SaveReportFairness
    /\ LoadReleaseFairness

-----------------------------------------------------------------------------
(* The protocol's properties (spec/NAMES.md, "Protocol"); SaveResolvesProp *)
(* (every not-ready entry eventually ready or discarded) is the core's.   *)

\* An item the check reported cached is pinned when its load is dispatched
\* (its consumer side runs), unless the engine did not schedule it and
\* released the pin its check took.
CheckedHitPinnedProp ==
    [][\A k \in (toLoad \ toLoad') \ computed :
          \/ /\ loads'[k] = 1
             /\ k \in DOMAIN entries'
             /\ entries'[k].pins > 0
          \/ loads[k] = 1 /\ loads'[k] = 0]_protocolVars

\* No save is dispatched for an item whose output was not computed: by the
\* worker in the step (with GpuCache, an item it keeps is not).
SaveOfComputedProp ==
    [][\A k \in (saving' \cup unmade') \ (saving \cup unmade) : k \in Encoded]_protocolVars

\* Every pin the protocol takes is eventually released.
LoadPinReleasedProp == \A k \in Keys : (loads[k] = 1) ~> (loads[k] = 0)
=============================================================================
