------------------------ MODULE EmbeddingCacheSieve -------------------------
(***************************************************************************)
(* Eviction policy "sieve" (SIEVE, Zhang et al., NSDI 2024, adapted to     *)
(* pins).  spec/POLICIES.md, section "sieve".  Same layout as              *)
(* EmbeddingCacheFifo (see there); the glue is EmbeddingCachePolicy.       *)
(*                                                                         *)
(* One FIFO queue of the READY keys, oldest first (the paper's tail is     *)
(* position 1, its head the last position), a visited bit per queued key,  *)
(* a pinned bit per queued key (held in place, not evictable), and a       *)
(* hand, the position the next eviction starts from (0: none, start at     *)
(* the oldest).                                                            *)
(* ready: append, visited FALSE.  hit: visited TRUE, the key stays where   *)
(* it is.  hold: pinned TRUE, the key stays where it is.  release:         *)
(* pinned FALSE (visited stays TRUE: the pin was a use).                   *)
(* evict: from the hand toward the newest, wrapping to the oldest: a held  *)
(* key is passed untouched; a visited one has its bit cleared and is       *)
(* passed; the first unvisited unheld key is evicted and the hand stays    *)
(* at its position, which now holds the next newer key (0 if it was the    *)
(* newest).  The hand never points at a removed key: only evict removes    *)
(* a queued key (discard removes only not-ready keys, never queued).       *)
(* Order property: EvictUnvisitedFromHandProp (EmbeddingCacheSieveCheck).  *)
(***************************************************************************)
EXTENDS EmbeddingCacheLib, EmbeddingCacheParams

VARIABLE
    policy      \* [queue, visited, pinned, hand]:
                \*   queue:   the ready keys, oldest first
                \*   visited: queued keys -> BOOLEAN (used since the hand passed)
                \*   pinned:  queued keys -> BOOLEAN (held: kept in place)
                \*   hand:    0 .. Len(queue), where the next eviction starts

\* s without its i-th element.
RemoveAt(s, i) == SubSeq(s, 1, i - 1) \o SubSeq(s, i + 1, Len(s))

-----------------------------------------------------------------------------
(* The hooks.                                                              *)

PInit == [queue |-> <<>>, visited |-> [k \in {} |-> FALSE],
          pinned |-> [k \in {} |-> FALSE], hand |-> 0]

Admit(p, k, s)   == p
Forget(p, k)     == p
Ready(p, k, s)   == [p EXCEPT !.queue = Append(@, k), !.visited = Put(@, k, FALSE),
                              !.pinned = Put(@, k, FALSE)]
Hit(p, k)        == [p EXCEPT !.visited[k] = TRUE]
Hold(p, k)       == [p EXCEPT !.pinned[k] = TRUE]
Release(p, k, s) == [p EXCEPT !.pinned[k] = FALSE]

HasVictim(p) == \E i \in DOMAIN p.queue : ~p.pinned[p.queue[i]]

\* Where the sweep starts: the hand, or the oldest key when there is none.
Start(p) == IF p.hand = 0 THEN 1 ELSE p.hand

\* The position after i, toward the newest, wrapping to the oldest.
Succ(p, i) == IF i >= Len(p.queue) THEN 1 ELSE i + 1

\* Remove the key at position i; the hand stays at i (the next newer key)
\* or is reset to 0 when i was the newest.
EvictAt(p, i) ==
    LET k == p.queue[i] IN
    [victim |-> k,
     p |-> [p EXCEPT !.queue = RemoveAt(@, i), !.visited = Drop(@, k),
                     !.pinned = Drop(@, k), !.hand = IF i = Len(p.queue) THEN 0 ELSE i]]

\* The sweep from position i.  Terminates when HasVictim(p): after one full
\* turn every unheld key's bit is clear.
RECURSIVE Sweep(_, _)
Sweep(p, i) ==
    LET k == p.queue[i] IN
    IF p.pinned[k] THEN Sweep(p, Succ(p, i))
    ELSE IF p.visited[k] THEN Sweep([p EXCEPT !.visited[k] = FALSE], Succ(p, i))
    ELSE EvictAt(p, i)

EvictOne(p, sz) == Sweep(p, Start(p))

\* The policy state as the layers' views compare it (EmbeddingCacheLayer):
\* finite as it is, so itself.
ViewState(p) == p

-----------------------------------------------------------------------------
INSTANCE EmbeddingCachePolicy

queue   == policy.queue
visited == policy.visited
pinned  == policy.pinned
hand    == policy.hand

PolicyTypeOK ==
    /\ DOMAIN policy = {"queue", "visited", "pinned", "hand"}
    /\ queue \in Seq(Keys)
    /\ \A k \in DOMAIN visited : visited[k] \in BOOLEAN
    /\ \A k \in DOMAIN pinned : pinned[k] \in BOOLEAN
    /\ hand \in 0 .. Len(queue)

\* The queued keys that are not held: what the policy counts as evictable.
Unheld == {k \in Range(queue) : ~pinned[k]}

PolicySize == Cardinality(Unheld)

\* Every policy state of PolicyTypeOK /\ EvictableSetInv at an inductive
\* model's bounds (EmbeddingCacheInductive): the ready keys in any order,
\* any visited and pinned bits on them, the hand anywhere (the domains
\* EvictableSetInv fixes).
PolicyStates ==
    LET ready == {k \in Live : entries[k].pins >= 0}
    IN  {[queue |-> q, visited |-> v, pinned |-> p, hand |-> h] :
            q \in Orders(ready), v \in [ready -> BOOLEAN], p \in [ready -> BOOLEAN],
            h \in 0 .. Cardinality(ready)}

\* The queue holds exactly the ready keys, each once; the pinned bits mark
\* exactly the pinned ones, so the unheld queued keys are exactly E.
EvictableSetInv ==
    /\ Range(queue) = {k \in Live : entries[k].pins >= 0}
    /\ Len(queue) = Cardinality(Range(queue))
    /\ DOMAIN visited = Range(queue)
    /\ DOMAIN pinned = Range(queue)
    /\ Unheld = Evictable
    /\ PolicySize = Cardinality(Evictable)
=============================================================================
