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
(* later: a save ends in mark_ready, a failed save in discard; a load,  *)
(* done or failed, ends in the consumer's unpin.                         *)
(*                                                                         *)
(* The instance's Roles: "producer" (computes the misses and saves them: *)
(* alloc if the key is absent, the save dispatched, mark_ready when the  *)
(* worker reports), "consumer" (loads the checked hits: pin, the load    *)
(* dispatched, unpin when the worker reports), or both.                  *)
(*                                                                         *)
(* Order = "today": the check is get + ready (a query); then the         *)
(* producer side runs for the computed items (its allocs may evict);     *)
(* then, per checked hit, the consumer side (get, ready, pin: in one     *)
(* scheduler step that is pin_if_ready's state change) and its producer  *)
(* side (alloc if absent).  A hit the allocs evicted is then loaded      *)
(* without a pin, and re-allocated as not-ready with a save dispatched  *)
(* of an output never computed.                                          *)
(* Order = "safe": the check pins each hit (pin_if_ready); then the      *)
(* producer side for the misses; then the hits' loads are dispatched.   *)
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
    Order       \* the engine's order of calls: "today" or "safe"

Role == {"producer", "consumer"}

ASSUME ProtocolAssumption ==
    /\ Need \in [Keys -> 1 .. N]
    /\ Roles \subseteq Role /\ Roles # {}
    /\ MaxItems \in 1 .. Cardinality(Keys)
    /\ Order \in {"today", "safe"}

Producer == "producer" \in Roles
Consumer == "consumer" \in Roles

VARIABLES
    toCheck,    \* safe order: the request's items still to check (pin_if_ready)
    toProduce,  \* the items whose producer side is still to run (alloc if absent)
    toLoad,     \* the checked hits whose load is still to dispatch
    computed,   \* the items whose output the current step computes (its misses)
    saving,     \* the items with a save in flight (the worker writes them)
    loads       \* loads[k] = 1: the engine holds a pin on k for its load

engineVars == <<toCheck, toProduce, toLoad, computed, saving, loads>>
\* (Listed, not <<fullVars, ...>>: TLC 2.15 cannot evaluate UNCHANGED of a
\* tuple that reached this module through a bare INSTANCE.)
cacheCallVars == <<entries, free, evictable, lastOp, policy>>
protocolVars  == <<entries, free, evictable, lastOp, policy,
                   toCheck, toProduce, toLoad, computed, saving, loads>>

ProtocolTypeOK ==
    /\ TypeOK
    /\ PolicyTypeOK
    /\ {toCheck, toProduce, toLoad, computed, saving} \subseteq SUBSET Keys
    /\ loads \in [Keys -> 0 .. 1]

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
    /\ saving = {}
    /\ loads = [k \in Keys |-> 0]

-----------------------------------------------------------------------------
(* The engine's scheduler step.                                            *)

\* Today's check: get + ready per item, a query of the cache.
CheckToday(R) ==
    /\ Order = "today"
    /\ Idle
    /\ R \in Requests
    /\ LET hits == IF Consumer THEN {k \in R : Cached(k)} ELSE {}
       IN  /\ toLoad'    = hits
           /\ computed'  = R \ hits
           /\ toProduce' = IF Producer THEN R \ hits ELSE {}
    /\ UNCHANGED <<toCheck, saving, loads>>
    /\ UNCHANGED cacheCallVars

\* The safe order's step starts: a consumer checks each item by pinning it.
CheckSafe(R) ==
    /\ Order = "safe"
    /\ Idle
    /\ R \in Requests
    /\ toCheck'   = IF Consumer THEN R ELSE {}
    /\ computed'  = IF Consumer THEN {} ELSE R
    /\ toProduce' = IF Consumer \/ ~Producer THEN {} ELSE R
    /\ UNCHANGED <<toLoad, saving, loads>>
    /\ UNCHANGED cacheCallVars

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
    /\ UNCHANGED saving

\* The producer side of item k: alloc if the key is absent, and on success
\* the save dispatched; alloc returning None saves nothing.
Produce(k) ==
    /\ toCheck = {}
    /\ k \in toProduce
    /\ toProduce' = toProduce \ {k}
    /\ IF k \in Live
          THEN UNCHANGED <<entries, free, evictable, lastOp, policy, saving>>
          ELSE \/ CacheAlloc(k, Need[k]) /\ saving' = saving \cup {k}
               \/ CacheAllocFail(k, Need[k]) /\ UNCHANGED saving
    /\ UNCHANGED <<toCheck, toLoad, computed, loads>>

\* The consumer side of checked hit k: its load dispatched.  Today it first
\* gets, checks ready and pins (pin_if_ready's state change); if k is gone,
\* the load goes out without a pin, and k's producer side runs next.  In the
\* safe order k was pinned by the check.
Load(k) ==
    /\ toCheck = {} /\ toProduce = {}
    /\ k \in toLoad
    /\ toLoad' = toLoad \ {k}
    /\ IF Order = "today"
          THEN /\ CachePinIfReady(k)
               /\ loads' = [loads EXCEPT ![k] = IF PinIfReadyHits(k) THEN 1 ELSE 0]
               /\ toProduce' = IF Producer /\ ~PinIfReadyHits(k) THEN {k} ELSE {}
          ELSE UNCHANGED <<entries, free, evictable, lastOp, policy, loads, toProduce>>
    /\ UNCHANGED <<toCheck, computed, saving>>

\* Any call of the engine inside a started step.
EngineCall ==
    \E k \in Keys : CheckPin(k) \/ Produce(k) \/ Load(k)

-----------------------------------------------------------------------------
(* The worker's reports, handled between scheduler steps.                  *)

\* The save of k completed: the producer marks the entry ready.
SaveDone(k) ==
    /\ Idle
    /\ k \in saving
    /\ CacheMarkReady(k)
    /\ saving' = saving \ {k}
    /\ UNCHANGED <<toCheck, toProduce, toLoad, computed, loads>>

\* The save of k failed: the producer discards the not-ready entry.
SaveFailed(k) ==
    /\ Idle
    /\ k \in saving
    /\ CacheDiscard(k)
    /\ saving' = saving \ {k}
    /\ UNCHANGED <<toCheck, toProduce, toLoad, computed, loads>>

\* The load of k completed or failed: either way the consumer unpins.
LoadDone(k) ==
    /\ Idle
    /\ loads[k] = 1
    /\ CacheUnpin(k)
    /\ loads' = [loads EXCEPT ![k] = 0]
    /\ UNCHANGED <<toCheck, toProduce, toLoad, computed, saving>>

ProtocolNext ==
    \/ \E R \in SUBSET Keys : CheckToday(R) \/ CheckSafe(R)
    \/ EngineCall
    \/ \E k \in Keys : SaveDone(k) \/ SaveFailed(k) \/ LoadDone(k)

-----------------------------------------------------------------------------
(* Fairness: on finishing work only, none on starting a request.           *)

\* A started scheduler step runs to its end.
EngineFinishFairness == WF_protocolVars(EngineCall)

\* A dispatched save is reported, done or failed.  Strong: the reports are
\* handled between steps, so an engine that keeps scheduling enables them
\* only intermittently.
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
(* The protocol's properties (spec/NAMES.md, "Protocol").                  *)

\* An item the check reported cached is pinned when its load is dispatched.
CheckedHitPinnedProp ==
    [][\A k \in toLoad \ toLoad' :
          /\ loads'[k] = 1
          /\ k \in DOMAIN entries'
          /\ entries'[k].pins > 0]_protocolVars

\* No save is dispatched for an item whose output was not computed.
SaveOfComputedProp ==
    [][\A k \in saving' \ saving : k \in computed]_protocolVars

\* Every pin the protocol takes is eventually released.
LoadPinReleasedProp == \A k \in Keys : (loads[k] = 1) ~> (loads[k] = 0)
=============================================================================
