----------------------- MODULE EmbeddingCacheDensity -----------------------
(***************************************************************************)
(* Eviction policy "density" (lowest use count per block first, counts     *)
(* that outlive eviction, periodic halving).  spec/policies/density.md.    *)
(* Same layout as EmbeddingCacheGdsf; the glue is EmbeddingCachePolicy.   *)
(*                                                                         *)
(* count[k] for every live key: admit sets it to                           *)
(* Min(MaxCount, (k's count in the history, 0 if none) + 1) and takes k    *)
(* out of the history; a hit adds 1 (capped).  The history holds the       *)
(* counts of non-live keys (evicted or forgotten), oldest first, at most   *)
(* HistorySize of them.  ticks counts admits and hits; when it reaches     *)
(* Period every count halves (live ones stay >= 1; history keys whose      *)
(* count falls to 0 leave) and ticks restarts at 0.  order holds E in the  *)
(* order its members joined (ready or release: the tie-break).  evict:    *)
(* the member of E with the smallest density                              *)
(* (Scale * count) \div Max(size, 1), ties to the earliest joined; its    *)
(* count goes into the history.  No inflation clock (unlike gdsf).         *)
(* Order property: EvictLowestDensityProp (EmbeddingCacheDensityCheck,    *)
(* on ghosts); own invariants: HistoryHoldsNoLiveKeyInv, HistoryBoundInv. *)
(***************************************************************************)
EXTENDS EmbeddingCacheLib, EmbeddingCacheParams

CONSTANTS
    Scale,          \* the density scale (code default 2^32; models small)
    MaxCount,       \* the use count cap
    HistorySize,    \* how many non-live keys the history keeps
    Period          \* admits + hits between two halvings

ASSUME DensityAssumption ==
    /\ Scale \in Nat \ {0} /\ MaxCount \in Nat \ {0}
    /\ HistorySize \in Nat /\ Period \in Nat \ {0}

VARIABLE
    policy      \* [count, history, order, ticks]:
                \*   count:   live keys -> 1 .. MaxCount
                \*   history: <<key, count>> of non-live keys, oldest first
                \*   order:   E in the order the keys joined it (the tie-break)
                \*   ticks:   admits and hits since the last halving

\* The use density of a count over s blocks (integers, as the code).
Density(c, s) == (Scale * c) \div Max(s, 1)

HistKeys(h) == {h[i][1] : i \in DOMAIN h}

\* k's count in the history h, 0 when k is not there.
HistCount(h, k) ==
    IF k \in HistKeys(h) THEN h[CHOOSE i \in DOMAIN h : h[i][1] = k][2] ELSE 0

\* The history without k.
HistDrop(h, k) == SelectSeq(h, LAMBDA e : e[1] # k)

\* The history cut to its newest HistorySize keys.
HistTrim(h) == IF Len(h) > HistorySize THEN SubSeq(h, Len(h) - HistorySize + 1, Len(h)) ELSE h

\* The history after the non-live key k left count c.
HistPush(h, k, c) == HistTrim(Append(h, <<k, c>>))

\* Every count halved: a live one stays >= 1, a history key at 0 leaves.
HalveCounts(p) ==
    [p EXCEPT !.count = [k \in DOMAIN @ |-> Max(1, @[k] \div 2)],
              !.history = SelectSeq([i \in DOMAIN @ |-> <<@[i][1], @[i][2] \div 2>>],
                                    LAMBDA e : e[2] > 0)]

\* One admit or hit: ticks + 1, and the halving when it reaches Period.
TickCounts(p) == IF p.ticks + 1 >= Period THEN [HalveCounts(p) EXCEPT !.ticks = 0]
           ELSE [p EXCEPT !.ticks = @ + 1]

-----------------------------------------------------------------------------
(* The hooks.                                                              *)

PInit == [count |-> [k \in {} |-> 0], history |-> <<>>, order |-> <<>>, ticks |-> 0]

Admit(p, k, s) ==
    TickCounts([p EXCEPT !.count = Put(@, k, Min(MaxCount, HistCount(p.history, k) + 1)),
                   !.history = HistDrop(@, k)])
Forget(p, k) ==
    [p EXCEPT !.count = Drop(@, k), !.history = HistPush(@, k, p.count[k])]
Ready(p, k, s)   == [p EXCEPT !.order = Append(@, k)]
Hit(p, k)        == TickCounts([p EXCEPT !.count[k] = Min(@ + 1, MaxCount)])
Hold(p, k)       == [p EXCEPT !.order = Remove(@, k)]
Release(p, k, s) == [p EXCEPT !.order = Append(@, k)]

HasVictim(p) == p.order # <<>>

\* The position in order of the victim (sz: the live keys' sizes): the
\* smallest density, then the earliest joined.
VictimPos(p, sz) ==
    LET d(i) == Density(p.count[p.order[i]], sz[p.order[i]])
    IN  CHOOSE i \in DOMAIN p.order :
            \A j \in DOMAIN p.order : d(j) > d(i) \/ (d(j) = d(i) /\ j >= i)

\* The history after victim k left count c (as a forgotten key's).
EvictedHistory(h, k, c) == HistPush(h, k, c)

EvictOne(p, sz) ==
    LET v == p.order[VictimPos(p, sz)]
    IN  [victim |-> v,
         p |-> [p EXCEPT !.count = Drop(@, v), !.order = Remove(@, v),
                         !.history = EvictedHistory(@, v, p.count[v])]]

\* The policy state as the layers' views compare it (EmbeddingCacheLayer):
\* finite as it is, so itself.
ViewState(p) == p

-----------------------------------------------------------------------------
INSTANCE EmbeddingCachePolicy

count   == policy.count
history == policy.history
order   == policy.order
ticks   == policy.ticks

PolicyTypeOK ==
    /\ DOMAIN policy = {"count", "history", "order", "ticks"}
    /\ DOMAIN count \subseteq Keys
    /\ \A k \in DOMAIN count : count[k] \in 1 .. MaxCount
    /\ \A i \in DOMAIN history : history[i][1] \in Keys /\ history[i][2] \in 1 .. MaxCount
    /\ order \in Seq(Keys)
    /\ ticks \in 0 .. Period - 1

\* Every policy state of PolicyTypeOK /\ EvictableSetInv at an inductive
\* model's bounds (EmbeddingCacheInductive): counts on the live keys, the
\* history any sequence of at most HistorySize pairs of a non-live key and
\* a count, order each key of E once (the domains EvictableSetInv fixes).
PolicyStates ==
    {[count |-> c, history |-> h, order |-> o, ticks |-> t] :
        c \in [Live -> 1 .. MaxCount],
        h \in SeqsOf((Keys \ Live) \X (1 .. MaxCount), HistorySize),
        o \in Orders(Evictable), t \in 0 .. Period - 1}

PolicySize == Len(order)

\* order holds exactly E, each once; count is defined exactly on the live
\* keys.
EvictableSetInv ==
    /\ Range(order) = Evictable
    /\ Len(order) = Cardinality(Range(order))
    /\ DOMAIN count = Live
    /\ PolicySize = Cardinality(Evictable)

\* The history holds non-live keys only, each once.
HistoryHoldsNoLiveKeyInv ==
    /\ HistKeys(history) \cap Live = {}
    /\ Len(history) = Cardinality(HistKeys(history))

\* The history keeps at most HistorySize keys.
HistoryBoundInv == Len(history) <= HistorySize
=============================================================================
