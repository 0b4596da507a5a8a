------------------------- MODULE EmbeddingCacheBugs -------------------------
(***************************************************************************)
(* Realistic defects, one per safety invariant or action property, each a *)
(* drop-in replacement for one operator of EmbeddingCache.  A bug model   *)
(* (MCBug*.cfg) substitutes one of them (`Op <- BuggyOp`) and checks only  *)
(* the invariant or property it must violate: if TLC does not report that *)
(* violation, the invariant is vacuous on the models we check.            *)
(***************************************************************************)
EXTENDS EmbeddingCache

\* TypeOK: pin decrements the counter on every pin, not only when the entry
\* was evictable (the `if entry.evictable` guard covers the dequeue only).
PinStepAlwaysDecrements(k) ==
    /\ entries'   = [entries EXCEPT ![k].pins = @ + 1]
    /\ queue'     = Remove(queue, k)
    /\ evictable' = evictable - Size(k)
    /\ UNCHANGED free

\* BlockConservationInv: discard forgets to return the entry's blocks.
DiscardKeepsBlocks(k) ==
    /\ k \in Live
    /\ entries[k].pins = NotReady
    /\ entries' = [j \in Live \ {k} |-> entries[j]]
    /\ UNCHANGED <<free, queue, evictable>>
    /\ lastOp' = [op |-> "Discard", key |-> k, n |-> 0]

\* EvictQueueInv: every unpin appends to the queue (double append), not
\* just the one that brings the pin count to 0.
UnpinAlwaysAppends(k) ==
    /\ k \in Live
    /\ entries[k].pins > 0
    /\ entries'   = [entries EXCEPT ![k].pins = @ - 1]
    /\ queue'     = Append(queue, k)
    /\ evictable' = evictable + (IF entries[k].pins = 1 THEN Size(k) ELSE 0)
    /\ UNCHANGED free
    /\ lastOp' = [op |-> "Unpin", key |-> k, n |-> 0]

\* EvictableCountInv: mark_ready queues the entry but forgets the counter.
MarkReadyForgetsCount(k) ==
    /\ k \in Live
    /\ entries[k].pins = NotReady
    /\ entries' = [entries EXCEPT ![k].pins = 0]
    /\ queue'   = Append(queue, k)
    /\ UNCHANGED <<free, evictable>>
    /\ lastOp' = [op |-> "MarkReady", key |-> k, n |-> 0]

\* HeldEntriesInv: has_held_entries counts only not-ready entries as held,
\* forgetting the pinned ones.
HasHeldEntriesNotReadyOnly == \E k \in Live : entries[k].pins = NotReady

\* EvictOldestFirstProp: eviction pops the newest queued entry (LIFO).
EvictNewest(n) ==
    LET i == CHOOSE j \in 0 .. Len(queue) :
                 /\ Cardinality(free)
                    + SeqBlocks(SubSeq(queue, Len(queue) - j + 1, Len(queue))) >= n
                 /\ \A m \in 0 .. j - 1 :
                        Cardinality(free)
                        + SeqBlocks(SubSeq(queue, Len(queue) - m + 1, Len(queue))) < n
    IN  [victims |-> SubSeq(queue, Len(queue) - i + 1, Len(queue)),
         rest    |-> SubSeq(queue, 1, Len(queue) - i)]

\* EvictOnlyAsNeededProp: the eviction loop tests `<=` instead of `<`, so it
\* evicts one entry more than needed whenever one is left to evict.
EvictOneTooMany(n) ==
    LET i == IF NeedEvict(n) < Len(queue) /\ Cardinality(free) < n
                THEN NeedEvict(n) + 1 ELSE NeedEvict(n)
    IN  [victims |-> SubSeq(queue, 1, i), rest |-> SubSeq(queue, i + 1, Len(queue))]

\* FailedAllocUnchangedProp: alloc evicts before the fail-fast check, so a
\* failing alloc has already emptied the queue.
AllocFailEvicts(k, n) ==
    /\ k \notin Live
    /\ n \in 0 .. N
    /\ ~CanAlloc(n)
    /\ entries'   = [j \in Live \ Range(queue) |-> entries[j]]
    /\ free'      = free \cup UNION {entries[v].blocks : v \in Range(queue)}
    /\ queue'     = <<>>
    /\ evictable' = 0
    /\ lastOp' = [op |-> "AllocFail", key |-> k, n |-> n]

\* AllocFailsOnlyWhenShortProp: the fail-fast check looks at free blocks
\* only, so alloc fails although eviction could make room.
CanAllocFreeOnly(n) == Cardinality(free) >= n

\* HeldBlocksStableProp: pin forgets to take the entry off the queue, so a
\* pinned entry is evicted and its blocks handed to the next alloc.
PinStepKeepsQueued(k) ==
    /\ entries' = [entries EXCEPT ![k].pins = @ + 1]
    /\ UNCHANGED <<free, queue, evictable>>
=============================================================================
