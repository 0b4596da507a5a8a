--------------------- MODULE EmbeddingCacheDensityBugs ---------------------
(***************************************************************************)
(* Defects of the density policy, one per density property (see           *)
(* EmbeddingCacheBugs for how bug models use them).                        *)
(***************************************************************************)
EXTENDS EmbeddingCacheDensityCheck

\* EvictLowestDensityProp: eviction takes the highest density (ties to the
\* earliest joined).
HighestPos(p, sz) ==
    LET d(i) == Density(p.count[p.order[i]], sz[p.order[i]])
    IN  CHOOSE i \in DOMAIN p.order :
            \A j \in DOMAIN p.order : d(j) < d(i) \/ (d(j) = d(i) /\ j >= i)

\* EvictLowestDensityProp: admit ignores the history; every count restarts
\* at 1 (the key still leaves the history).
AdmitFresh(p, k, s) ==
    TickCounts([p EXCEPT !.count = Put(@, k, 1), !.history = HistDrop(@, k)])

\* EvictLowestDensityProp: counts never halve (ticks still wrap).
NoAge(p) == p

\* EvictableSetInv: pin leaves the key in the order.
HoldKeepsOrder(p, k) == p

\* HistoryHoldsNoLiveKeyInv: admit reads the key's count but leaves it in
\* the history.
HistKeep(h, k) == h

\* HistoryBoundInv: a victim's count is appended to the history without
\* cutting it (a forgotten key's is cut as it should be).
EvictedUncut(h, k, c) == Append(h, <<k, c>>)
=============================================================================
