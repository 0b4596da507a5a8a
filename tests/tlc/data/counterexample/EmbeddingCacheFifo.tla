------------------------- MODULE EmbeddingCacheFifo -------------------------
(***************************************************************************)
(* Eviction policy "fifo" (the seed's, the default): a queue of E, oldest  *)
(* first.  ready/release append at the tail, hold removes, evict takes the *)
(* head.  spec/POLICY_SEMANTICS.draft.md, section "fifo".                  *)
(*                                                                         *)
(* The policy interface (the same in every policy module):                 *)
(*   - its variables (here: queue), policyVars, PolicyTypeOK;             *)
(*   - its state as a record, P, with SetP(p) assigning it; PInit;        *)
(*   - the hooks, functions from a policy state to a policy state:        *)
(*     Admit(p, k), Forget(p, k), Ready(p, k), Hit(p, k), Hold(p, k),     *)
(*     Release(p, k), and EvictOne(p) = [victim, p] (called while         *)
(*     HasVictim(p) until enough blocks are free);                         *)
(*   - EvictableSetInv: its structure holds exactly E, each key once.      *)
(* The "glue" section composes the core actions with the hooks; it is the *)
(* same text in every policy module.  Its order property                   *)
(* (EvictOldestFirstProp) is stated on a ghost clock in                   *)
(* EmbeddingCacheFifoCheck, independently of the queue.                    *)
(***************************************************************************)
EXTENDS EmbeddingCache

VARIABLES
    queue       \* E, oldest first (_entries_free_list)

policyVars == <<queue>>
fullVars   == <<entries, free, evictable, lastOp, queue>>

PolicyTypeOK == queue \in Seq(Keys)

\* The policy state as a record, its assignment, its initial value.
P       == [queue |-> queue]
SetP(p) == queue' = p.queue
PInit   == queue = <<>>

-----------------------------------------------------------------------------
(* The hooks.                                                              *)

Admit(p, k)   == p
Forget(p, k)  == p
Ready(p, k)   == [p EXCEPT !.queue = Append(@, k)]
Hit(p, k)     == p
Hold(p, k)    == [p EXCEPT !.queue = Remove(@, k)]
Release(p, k) == [p EXCEPT !.queue = Append(@, k)]

\* A victim is left to choose.
HasVictim(p) == p.queue # <<>>

\* Evict the head of the queue.
EvictOne(p) == [victim |-> Head(p.queue), p |-> [p EXCEPT !.queue = Tail(@)]]

\* The policy's size (len(policy) in has_held_entries).
PolicySize == Len(queue)

\* The queue holds exactly E, each key once.
EvictableSetInv ==
    /\ Range(queue) = Evictable
    /\ Len(queue) = Cardinality(Range(queue))
    /\ PolicySize = Cardinality(Evictable)

-----------------------------------------------------------------------------
(* Glue: the core actions composed with the hooks (same in every policy). *)

\* Enough blocks are free once the victims got are evicted (the loop test
\* of _evict_until).
Enough(n, got) == FreeCount + SetBlocks(got) >= n

\* The eviction loop: evict until n blocks are free (or nothing is left).
RECURSIVE EvictLoop(_, _, _)
EvictLoop(p, n, got) ==
    IF Enough(n, got) \/ ~HasVictim(p) THEN [victims |-> got, p |-> p]
    ELSE LET r == EvictOne(p) IN EvictLoop(r.p, n, got \cup {r.victim})

\* The eviction sub-step of alloc(n): the victims and the policy state after.
Evict(n) == EvictLoop(P, n, {})

CacheInit == Init /\ PInit

\* alloc(k, n) taking blocks S (evict, then admit k).
CacheAlloc(k, n, S) ==
    /\ k \notin Live
    /\ CanAlloc(n)
    /\ LET ev == Evict(n)
       IN  /\ AllocStep(k, n, ev.victims, S)
           /\ SetP(Admit(ev.p, k))

\* The same, for any blocks S: the eviction is computed once for all S.
CacheAllocAny(k, n) ==
    /\ k \notin Live
    /\ CanAlloc(n)
    /\ LET ev == Evict(n)
       IN  \E S \in BlockChoices :
               /\ AllocStep(k, n, ev.victims, S)
               /\ SetP(Admit(ev.p, k))

CacheAllocFail(k, n) == AllocFail(k, n) /\ UNCHANGED policyVars

CacheMarkReady(k) == MarkReady(k) /\ SetP(Ready(P, k))

\* A use (PinStep) of the ready entry k: hold on the first pin, then hit.
Use(p, k) == IF entries[k].pins = 0 THEN Hit(Hold(p, k), k) ELSE Hit(p, k)

CachePin(k) == Pin(k) /\ SetP(Use(P, k))

CachePinIfReady(k) ==
    /\ PinIfReady(k)
    /\ IF PinIfReadyHits(k) THEN SetP(Use(P, k)) ELSE UNCHANGED policyVars

CacheUnpin(k) ==
    /\ Unpin(k)
    /\ IF entries[k].pins = 1 THEN SetP(Release(P, k)) ELSE UNCHANGED policyVars

CacheDiscard(k) == Discard(k) /\ SetP(Forget(P, k))

CacheNext ==
    \/ \E k \in Keys, n \in 0 .. N : CacheAllocAny(k, n)
    \/ \E k \in Keys, n \in 0 .. N : CacheAllocFail(k, n)
    \/ \E k \in Keys : CacheMarkReady(k)
    \/ \E k \in Keys : CachePin(k)
    \/ \E k \in Keys : CachePinIfReady(k)
    \/ \E k \in Keys : CacheUnpin(k)
    \/ \E k \in Keys : CacheDiscard(k)

CacheSpec == CacheInit /\ [][CacheNext]_fullVars

\* The state without lastOp (no action reads lastOp): README.md.
PolicyHistoryView == <<cacheVars, policyVars>>

\* The core spec, with the policy's variables hidden (not mentioned).
Core == INSTANCE EmbeddingCache
CoreSpec == Core!Spec
=============================================================================
