----------------------- MODULE EmbeddingCacheGdsfBugs -----------------------
(***************************************************************************)
(* Defects of the gdsf policy, one per gdsf property (see                  *)
(* EmbeddingCacheBugs for how bug models use them).                        *)
(***************************************************************************)
EXTENDS EmbeddingCacheGdsfCheck

\* EvictLowestPriorityProp: eviction takes the key that joined E first
\* (the head of the tie-break order), ignoring priorities.
EvictOneFirstJoined(p) ==
    LET v == Head(p.order)
    IN  [victim |-> v,
         p |-> [p EXCEPT !.prio = Drop(@, v), !.freq = Drop(@, v),
                         !.order = Tail(@), !.clock = p.prio[v]]]

\* EvictableSetInv: pin forgets to take the key out of the tie-break order.
HoldKeepsOrder(p, k) == [p EXCEPT !.prio = Drop(@, k)]
=============================================================================
