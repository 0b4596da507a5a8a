----------------------- MODULE EmbeddingCacheGdsfCheck -----------------------
(***************************************************************************)
(* Model-checking aids for the gdsf policy.  The clock grows without      *)
(* bound, so the views keep priorities relative to it (prio - clock):     *)
(* every action compares priorities only with each other, a new priority *)
(* is clock + a value that does not depend on the clock, and the clock    *)
(* only ever becomes the priority of a member of E, so shifting all       *)
(* priorities and the clock by the same amount maps behaviours to         *)
(* behaviours (README.md, "Reductions").  prio - clock lies in            *)
(* 0 .. Scale * MaxFreq on well-formed states.                            *)
(***************************************************************************)
EXTENDS EmbeddingCacheGdsf, EmbeddingCacheReductions

\* Priorities relative to the clock.
RelPrio == [k \in DOMAIN prio |-> prio[k] - clock]

\* Drops lastOp and the clock's absolute value (bug and refinement models).
GdsfView == <<cacheVars, RelPrio, freq, order>>

\* The clock is at most every priority in E.
ClockBelowPrioInv == \A k \in DOMAIN prio : prio[k] >= clock

WellFormed ==
    /\ CoreWellFormed
    /\ PolicyTypeOK
    /\ EvictableSetInv
    /\ ClockBelowPrioInv

\* The frequency of a live key, 0 if it is not ready.
FreqOf(k) == IF k \in DOMAIN freq THEN freq[k] ELSE 0

\* Canonical under key and block renaming when well formed: order as
\* <<size, prio - clock, freq>> per position, the held entries as a bag of
\* <<size, pins, freq>>.
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
