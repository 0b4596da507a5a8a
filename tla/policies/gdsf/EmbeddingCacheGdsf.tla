------------------------- MODULE EmbeddingCacheGdsf -------------------------
(***************************************************************************)
(* Eviction policy "gdsf" (GreedyDual-Size-Frequency, integer form).       *)
(* spec/POLICIES.md, section "gdsf".  Same layout as        *)
(* EmbeddingCacheFifo (see there); the glue is EmbeddingCachePolicy.      *)
(*                                                                         *)
(* clock L starts at 0.  freq[k] for ready live keys: 1 at mark_ready,    *)
(* a hit makes it Min(freq + 1, MaxFreq).  On joining E (ready or          *)
(* release): prio[k] = L + (Scale * freq[k]) \div Max(size, 1), and k is   *)
(* appended to order (the tie-break).  evict: the member of E with the    *)
(* smallest prio, ties by position in order; then L := prio[victim].      *)
(* hold removes k from prio and order (freq kept); evict drops freq.      *)
(* Order property: EvictLowestPriorityProp (below); the clock's rule:     *)
(* GdsfClockInv (EmbeddingCacheGdsfCheck).                                *)
(***************************************************************************)
EXTENDS EmbeddingCacheLib, EmbeddingCacheParams

CONSTANTS
    Scale,      \* S: the priority scale (code default 2^32; models small)
    MaxFreq     \* F: the frequency cap

ASSUME GdsfAssumption == Scale \in Nat \ {0} /\ MaxFreq \in Nat \ {0}

VARIABLE
    policy      \* [prio, freq, order, clock]:
                \*   prio:  E -> priority
                \*   freq:  ready live keys -> 1 .. MaxFreq
                \*   order: E in the order the keys joined it (the tie-break)
                \*   clock: L, the priority of the last victim

-----------------------------------------------------------------------------
(* The hooks.                                                              *)

PInit == [prio |-> [k \in {} |-> 0], freq |-> [k \in {} |-> 0],
          order |-> <<>>, clock |-> 0]

\* k (s blocks) joins E: its priority from the clock, its frequency, s.
Join(p, k, s) ==
    [p EXCEPT !.prio  = Put(@, k, p.clock + (Scale * p.freq[k]) \div Max(s, 1)),
              !.order = Append(@, k)]

Admit(p, k, s)   == p
Forget(p, k)     == p
Ready(p, k, s)   == Join([p EXCEPT !.freq = Put(@, k, 1)], k, s)
Hit(p, k)        == [p EXCEPT !.freq[k] = Min(@ + 1, MaxFreq)]
Hold(p, k)       == [p EXCEPT !.prio = Drop(@, k), !.order = Remove(@, k)]
Release(p, k, s) == Join(p, k, s)

HasVictim(p) == p.order # <<>>

\* The position in order of the victim: smallest prio, then earliest.
VictimPos(p) ==
    CHOOSE i \in DOMAIN p.order :
        \A j \in DOMAIN p.order :
            \/ p.prio[p.order[j]] > p.prio[p.order[i]]
            \/ p.prio[p.order[j]] = p.prio[p.order[i]] /\ j >= i

\* The clock after an eviction, from the clock before and the victim's
\* priority: L := prio[victim].
NextClock(l, victimPrio) == victimPrio

EvictOne(p, sz) ==
    LET v == p.order[VictimPos(p)]
    IN  [victim |-> v,
         p |-> [p EXCEPT !.prio = Drop(@, v), !.freq = Drop(@, v),
                         !.order = Remove(@, v),
                         !.clock = NextClock(p.clock, p.prio[v])]]

\* The policy state as the layers' views compare it (EmbeddingCacheLayer):
\* the clock grows without bound, so each priority relative to it (the
\* clock shift of tla/README.md, Reductions: adding a constant to clock and
\* every prio maps behaviours to behaviours).
ViewState(p) == [p EXCEPT !.prio = [k \in DOMAIN @ |-> @[k] - p.clock], !.clock = 0]

-----------------------------------------------------------------------------
INSTANCE EmbeddingCachePolicy

prio  == policy.prio
freq  == policy.freq
order == policy.order
clock == policy.clock

PolicyTypeOK ==
    /\ DOMAIN policy = {"prio", "freq", "order", "clock"}
    /\ \A k \in DOMAIN prio : prio[k] \in Nat
    /\ \A k \in DOMAIN freq : freq[k] \in 1 .. MaxFreq
    /\ DOMAIN prio \subseteq Keys /\ DOMAIN freq \subseteq Keys
    /\ order \in Seq(Keys)
    /\ clock \in Nat

\* Every policy state of PolicyTypeOK /\ EvictableSetInv at an inductive
\* model's bounds (EmbeddingCacheInductive): the clock 0, every priority in
\* 0 .. Scale * MaxFreq (the bounds: a priority is at most the clock plus
\* Scale * MaxFreq, and shifting the clock and every priority by one amount
\* maps behaviours to behaviours: ViewState), freq on the ready live keys,
\* order each key of E once (the domains EvictableSetInv fixes).
PolicyStates ==
    {[prio |-> pr, freq |-> fr, order |-> o, clock |-> 0] :
        pr \in [Evictable -> 0 .. Scale * MaxFreq],
        fr \in [{k \in Live : entries[k].pins >= 0} -> 1 .. MaxFreq],
        o \in Orders(Evictable)}

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
=============================================================================
