---------------------- MODULE EmbeddingCacheSieveBugs -----------------------
(***************************************************************************)
(* Defects of the sieve policy, one per sieve rule (see EmbeddingCacheBugs *)
(* for how bug models use them).  Each replaces one operator of            *)
(* EmbeddingCacheSieve from the model's config (`Op <- BuggyOp`); the      *)
(* manifest (tla/models.json) states each bug model's defect.              *)
(***************************************************************************)
EXTENDS EmbeddingCacheSieveCheck

\* EvictUnvisitedFromHandProp: the hand does not persist; every eviction
\* starts again at the oldest key (Start <- StartAtOldest).
StartAtOldest(p) == 1

\* EvictUnvisitedFromHandProp: a hit moves the key to the newest end, as
\* LRU would (Hit <- HitMovesToNewest).  The hand stays on its key, or on
\* the next newer one (none past the newest) when it is the moved key, as a
\* hand kept as a pointer does (the code's planted SieveHitMoves).
HitMovesToNewest(p, k) ==
    LET i == CHOOSE j \in DOMAIN p.queue : p.queue[j] = k
        h == p.hand
    IN  [p EXCEPT !.queue = Append(Remove(@, k), k), !.visited[k] = TRUE,
                  !.hand = IF h > i THEN h - 1
                           ELSE IF h = i /\ i = Len(p.queue) THEN 0 ELSE h]

\* EvictUnvisitedFromHandProp: the hand passes visited keys without
\* clearing their bits (EvictOne <- EvictKeepingBits); bounded by one turn,
\* after which it takes the next unheld key.
RECURSIVE SweepKeepingBits(_, _, _)
SweepKeepingBits(p, i, steps) ==
    LET k == p.queue[i] IN
    IF ~p.pinned[k] /\ (~p.visited[k] \/ steps >= Len(p.queue)) THEN EvictAt(p, i)
    ELSE SweepKeepingBits(p, Succ(p, i), steps + 1)

EvictKeepingBits(p, sz) == SweepKeepingBits(p, Start(p), 0)

\* EvictableSetInv: the first pin leaves the key unheld, so the policy still
\* counts a pinned key as evictable (Hold <- HoldKeepsEvictable).
HoldKeepsEvictable(p, k) == p
=============================================================================
