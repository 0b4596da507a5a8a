--------------------- MODULE EmbeddingCacheDensityCheck ---------------------
(***************************************************************************)
(* The density policy with ghosts, to state its order                     *)
(* (EvictLowestDensityProp) from the cache's events rather than from the  *)
(* policy's variables: a policy that ignores the history, never halves its *)
(* counts, or orders E wrongly keeps every invariant and still violates it.*)
(*                                                                         *)
(* The ghosts read only the core's state and lastOp':                     *)
(*   gcount[k]  the use count of k: of a live key, or of a key in ghist;  *)
(*   ghist      the non-live keys whose count is remembered, oldest first; *)
(*   gticks     admits (successful allocs) and uses (pins of a ready key)  *)
(*              since the last halving;                                    *)
(*   gjoined    E in the order its members joined it (a key that enters E *)
(*              is appended; one that leaves is removed).                  *)
(* An alloc first evicts (each victim, lowest density first, is            *)
(* remembered), then admits its key (count: remembered + 1, capped); a     *)
(* discard remembers its key; a use adds 1 (capped); every admit and use   *)
(* ticks, and the Period-th tick halves every count (a live one stays     *)
(* >= 1, a remembered one at 0 is forgotten).                              *)
(*                                                                         *)
(* EvictLowestDensityProp: every victim of an alloc comes before every    *)
(* member of E that stays, by (density from the ghost count, join order). *)
(*                                                                         *)
(* Views: every variable is bounded (counts by MaxCount, ghist and order   *)
(* by the keys, ticks by Period); DensityView drops lastOp (no action     *)
(* reads it: the ghost step reads only lastOp') and the counts of keys    *)
(* neither live nor remembered (never read again: a key that comes back   *)
(* is admitted from 0).                                                    *)
(***************************************************************************)
EXTENDS EmbeddingCacheDensity   \* (EmbeddingCacheReductions comes with the glue)

VARIABLES
    gcount,     \* ghost: Keys -> its count (meaningful when live or in ghist)
    ghist,      \* ghost: the remembered non-live keys, oldest first
    gticks,     \* ghost: admits and uses since the last halving
    gjoined     \* ghost: E in join order

ghostVars == <<gcount, ghist, gticks, gjoined>>
checkVars == <<fullVars, gcount, ghist, gticks, gjoined>>

\* The ghosts of an inductive model's initial states (EmbeddingCacheInductive):
\* one value (gjoined an order of E, which GPlace reads).  Enough: no
\* invariant reads them, and no step's change of the other variables
\* depends on them (GhostStep only writes them).
GhostStates ==
    /\ gcount = [k \in Keys |-> 0] /\ ghist = <<>> /\ gticks = 0
    /\ gjoined = CHOOSE s \in Orders(Evictable) : TRUE

GhostInit ==
    /\ gcount = [k \in Keys |-> 0]
    /\ ghist = <<>>
    /\ gticks = 0
    /\ gjoined = <<>>

\* Before the step: the density of live key k and its place in gjoined.
GDensity(k) == Density(gcount[k], Size(k))
GPlace(k) == CHOOSE i \in DOMAIN gjoined : gjoined[i] = k

\* Live key v goes before live key w (both in E).
GBefore(v, w) ==
    \/ GDensity(v) < GDensity(w)
    \/ GDensity(v) = GDensity(w) /\ GPlace(v) < GPlace(w)

\* A ghost record g = [c, h, t] (counts, remembered keys, ticks).
\* k (not live) is remembered: newest last, the oldest beyond HistorySize go.
GRemember(g, k) ==
    LET h == Append(g.h, k)
    IN  [g EXCEPT !.h = SubSeq(h, Max(1, Len(h) - HistorySize + 1), Len(h))]

\* The victims V remembered one by one, the first victim first.
RECURSIVE GRememberAll(_, _)
GRememberAll(g, V) ==
    IF V = {} THEN g
    ELSE LET v == CHOOSE v \in V : \A w \in V \ {v} : GBefore(v, w)
         IN  GRememberAll(GRemember(g, v), V \ {v})

\* One tick, with L the live keys after the step.
GTick(g, L) ==
    IF g.t + 1 < Period THEN [g EXCEPT !.t = @ + 1]
    ELSE [c |-> [k \in Keys |-> IF k \in L THEN Max(1, g.c[k] \div 2) ELSE g.c[k] \div 2],
          h |-> SelectSeq(g.h, LAMBDA k : g.c[k] \div 2 > 0),
          t |-> 0]

\* k admitted: its remembered count (0 if none) + 1, capped; it is no
\* longer remembered.
GAdmit(g, k) ==
    LET was == IF \E i \in DOMAIN g.h : g.h[i] = k THEN g.c[k] ELSE 0
    IN  GTick([g EXCEPT !.c[k] = Min(MaxCount, was + 1),
                        !.h = SelectSeq(@, LAMBDA x : x # k)], DOMAIN entries')

\* A use of k: + 1, capped.
GUse(g, k) == GTick([g EXCEPT !.c[k] = Min(MaxCount, @ + 1)], DOMAIN entries')

Used(k) == k \in Live /\ entries[k].pins >= 0 /\ entries'[k].pins > entries[k].pins

GhostAfter ==
    LET g == [c |-> gcount, h |-> ghist, t |-> gticks]
        k == lastOp'.key
    IN  CASE lastOp'.op = "Alloc" -> GAdmit(GRememberAll(g, Evicted), k)
          [] lastOp'.op = "Discard" -> GRemember(g, k)
          [] lastOp'.op \in {"Pin", "PinIfReady"} /\ Used(k) -> GUse(g, k)
          [] OTHER -> g

GhostStep ==
    /\ LET g == GhostAfter
       IN  gcount' = g.c /\ ghist' = g.h /\ gticks' = g.t
    /\ LET kept == SelectSeq(gjoined, LAMBDA x : x \in Evictable')
           new == Evictable' \ Range(kept)
       IN  gjoined' = IF new = {} THEN kept ELSE Append(kept, CHOOSE x \in new : TRUE)

CheckSpec == CacheInit /\ GhostInit /\ [][CacheNext /\ GhostStep]_checkVars

\* The order property: every victim of an alloc is in E and comes before
\* every member of E that stays, by (ghost density, join order).
EvictLowestDensityProp ==
    [][lastOp'.op = "Alloc" =>
          /\ Evicted \subseteq Evictable
          /\ \A v \in Evicted, w \in Evictable \ Evicted : GBefore(v, w)]_checkVars

\* The counts of the keys that are live or remembered.
GCountView == [k \in Live \cup Range(ghist) |-> gcount[k]]

\* Drops lastOp and forgotten ghost counts (bug models).
DensityView == <<cacheVars, policy, GCountView, ghist, gticks, gjoined>>

QuotientView == DensityView
=============================================================================
