------------------------- MODULE EmbeddingCacheGdsf -------------------------
(***************************************************************************)
(* Eviction policy "gdsf" (GreedyDual-Size-Frequency, integer form).       *)
(* spec/POLICY_SEMANTICS.draft.md, section "gdsf".  Same interface as     *)
(* EmbeddingCacheFifo (see there); the glue section is the same text.     *)
(*                                                                         *)
(* clock L starts at 0.  freq[k] for ready live keys: 1 at mark_ready,    *)
(* a hit makes it Min(freq + 1, MaxFreq).  On joining E (ready or          *)
(* release): prio[k] = L + (Scale * freq[k]) \div Max(size, 1), and k is   *)
(* appended to order (the tie-break).  evict: the member of E with the    *)
(* smallest prio, ties by position in order; then L := prio[victim].      *)
(* hold removes k from prio and order (freq kept); evict drops freq.      *)
(* Order property: EvictLowestPriorityProp (below).                        *)
(***************************************************************************)
EXTENDS EmbeddingCache

CONSTANTS
    Scale,      \* S: the priority scale (code default 2^32; models small)
    MaxFreq     \* F: the frequency cap

ASSUME GdsfAssumption == Scale \in Nat \ {0} /\ MaxFreq \in Nat \ {0}

VARIABLES
    prio,       \* E -> priority
    freq,       \* ready live keys -> 1 .. MaxFreq
    order,      \* E in the order the keys joined it (the tie-break)
    clock       \* L: the priority of the last victim

policyVars == <<prio, freq, order, clock>>
fullVars   == <<entries, free, evictable, lastOp, prio, freq, order, clock>>

PolicyTypeOK ==
    /\ \A k \in DOMAIN prio : prio[k] \in Nat
    /\ \A k \in DOMAIN freq : freq[k] \in 1 .. MaxFreq
    /\ DOMAIN prio \subseteq Keys /\ DOMAIN freq \subseteq Keys
    /\ order \in Seq(Keys)
    /\ clock \in Nat

\* The policy state as a record, its assignment, its initial value.
P == [prio |-> prio, freq |-> freq, order |-> order, clock |-> clock]
SetP(p) == /\ prio' = p.prio /\ freq' = p.freq
           /\ order' = p.order /\ clock' = p.clock
PInit == /\ prio = [k \in {} |-> 0] /\ freq = [k \in {} |-> 0]
         /\ order = <<>> /\ clock = 0

-----------------------------------------------------------------------------
(* The hooks.                                                              *)

\* k joins E: its priority from the clock, its frequency and its size.
Join(p, k) ==
    [p EXCEPT !.prio  = Put(@, k, p.clock + (Scale * p.freq[k]) \div Max(Size(k), 1)),
              !.order = Append(@, k)]

Admit(p, k)   == p
Forget(p, k)  == p
Ready(p, k)   == Join([p EXCEPT !.freq = Put(@, k, 1)], k)
Hit(p, k)     == [p EXCEPT !.freq[k] = Min(@ + 1, MaxFreq)]
Hold(p, k)    == [p EXCEPT !.prio = Drop(@, k), !.order = Remove(@, k)]
Release(p, k) == Join(p, k)

HasVictim(p) == p.order # <<>>

\* The position in order of the victim: smallest prio, then earliest.
VictimPos(p) ==
    CHOOSE i \in DOMAIN p.order :
        \A j \in DOMAIN p.order :
            \/ p.prio[p.order[j]] > p.prio[p.order[i]]
            \/ p.prio[p.order[j]] = p.prio[p.order[i]] /\ j >= i

EvictOne(p) ==
    LET v == p.order[VictimPos(p)]
    IN  [victim |-> v,
         p |-> [p EXCEPT !.prio = Drop(@, v), !.freq = Drop(@, v),
                         !.order = Remove(@, v), !.clock = p.prio[v]]]

PolicySize == Len(order)

\* prio and order hold exactly E, each once; freq is defined exactly on
\* the ready live keys.
EvictableSetInv ==
    /\ DOMAIN prio = Evictable
    /\ Range(order) = Evictable
    /\ Len(order) = Cardinality(Range(order))
    /\ DOMAIN freq = {k \in Live : entries[k].pins >= 0}
    /\ PolicySize = Cardinality(Evictable)

\* The order property: every victim's priority is at most that of every
\* member of E that stays (prio is the policy's abstract priority; the
\* order sequence, its tie-break structure, is not consulted).
EvictLowestPriorityProp ==
    [][lastOp'.op = "Alloc" =>
          /\ Evicted \subseteq DOMAIN prio
          /\ \A v \in Evicted, w \in Evictable \ Evicted :
                 w \in DOMAIN prio => prio[v] <= prio[w]]_fullVars

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
