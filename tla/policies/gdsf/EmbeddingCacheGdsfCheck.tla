----------------------- MODULE EmbeddingCacheGdsfCheck -----------------------
(***************************************************************************)
(* Model-checking aids for the gdsf policy.                                *)
(*                                                                         *)
(* The clock's rule (L := the priority of the last victim) is stated on a  *)
(* ghost, independently of the policy's clock: lastVictimPrio holds the   *)
(* priority the last evicted key had (the largest priority among an       *)
(* alloc's victims: the loop evicts in nondecreasing priority).           *)
(* GdsfClockInv: clock = lastVictimPrio.  A clock that does not advance   *)
(* on eviction (MCBugGdsfClockStuck) keeps EvictLowestPriorityProp,       *)
(* ClockBelowPrioInv and EvictableSetInv, and violates this one.          *)
(*                                                                         *)
(* The clock grows without bound, so the views keep priorities relative   *)
(* to it (prio - clock): every action compares priorities only with each *)
(* other, a new priority is clock + a value that does not depend on the  *)
(* clock, and the clock only ever becomes the priority of a member of E, *)
(* so shifting all priorities, the clock and the ghost by the same amount *)
(* maps behaviours to behaviours (README.md, "Reductions").  prio - clock *)
(* lies in 0 .. Scale * MaxFreq on well-formed states.                    *)
(***************************************************************************)
EXTENDS EmbeddingCacheGdsf   \* (EmbeddingCacheReductions comes with the glue)

VARIABLE
    lastVictimPrio  \* ghost: the priority of the last evicted key (0 before any)

GhostInit == lastVictimPrio = 0

\* The priorities (before the step) of the keys an alloc evicted.
VictimPrios == {prio[v] : v \in Evicted \cap DOMAIN prio}

GhostStep ==
    lastVictimPrio' = IF VictimPrios = {} THEN lastVictimPrio
                      ELSE CHOOSE x \in VictimPrios : \A y \in VictimPrios : x >= y

checkVars == <<fullVars, lastVictimPrio>>

\* The ghost of an inductive model's initial states (EmbeddingCacheInductive):
\* every priority the bounds allow (GdsfClockInv, which reads it, filters).
GhostStates == lastVictimPrio \in 0 .. Scale * MaxFreq

CheckSpec == CacheInit /\ GhostInit /\ [][CacheNext /\ GhostStep]_checkVars

\* The clock is the priority of the last victim.
GdsfClockInv == clock = lastVictimPrio

\* Priorities relative to the clock.
RelPrio == [k \in DOMAIN prio |-> prio[k] - clock]

\* Drops lastOp and the clock's absolute value (bug models).
GdsfView == <<cacheVars, RelPrio, freq, order, lastVictimPrio - clock>>

\* The clock is at most every priority in E.
ClockBelowPrioInv == \A k \in DOMAIN prio : prio[k] >= clock

WellFormed ==
    /\ CoreWellFormed
    /\ PolicyTypeOK
    /\ EvictableSetInv
    /\ ClockBelowPrioInv
    /\ GdsfClockInv

\* The frequency of a live key, 0 if it is not ready.
FreqOf(k) == IF k \in DOMAIN freq THEN freq[k] ELSE 0

\* Canonical under key and block renaming and the clock shift when well
\* formed: order as <<size, prio - clock, freq>> per position, the held
\* entries as a bag of <<size, pins, freq>> (the ghost equals the clock).
QuotientView ==
    IF WellFormed
       THEN <<"quotient",
              [i \in DOMAIN order |->
                  <<Size(order[i]), prio[order[i]] - clock, freq[order[i]]>>],
              BagOf(Live \ Evictable,
                    LAMBDA k : <<Size(k), entries[k].pins, FreqOf(k)>>),
              FreeCount, evictable>>
       ELSE <<"raw", GdsfView>>
=============================================================================
