----------------------- MODULE EmbeddingCacheGdsfBugs -----------------------
(***************************************************************************)
(* Defects of the gdsf policy, one per gdsf property (see                  *)
(* EmbeddingCacheBugs for how bug models use them).                        *)
(***************************************************************************)
EXTENDS EmbeddingCacheGdsfCheck

\* EvictLowestPriorityProp: eviction takes the key that joined E first
\* (the head of the tie-break order), ignoring priorities.
FirstJoinedPos(p) == 1

\* EvictableSetInv: pin forgets to take the key out of the tie-break order.
HoldKeepsOrder(p, k) == [p EXCEPT !.prio = Drop(@, k)]

\* GdsfClockInv: the clock does not advance on eviction (L stays), so new
\* priorities are computed from a stale clock and old keys are not aged.
ClockStays(l, victimPrio) == l
=============================================================================
