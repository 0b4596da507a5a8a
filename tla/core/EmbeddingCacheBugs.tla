------------------------- MODULE EmbeddingCacheBugs -------------------------
(***************************************************************************)
(* Realistic defects, one per shared invariant or action property and per *)
(* fifo property, each a drop-in replacement for one operator of the core *)
(* (EmbeddingCache) or of the fifo policy (EmbeddingCacheFifo).  A bug    *)
(* model (MCBug*.cfg) substitutes it (`Op <- BuggyOp` for a hook,       *)
(* `Op <- [EmbeddingCache] BuggyOp` for a core action, `Op <-            *)
(* [EmbeddingCachePolicy] BuggyOp` for the glue) and checks only         *)
(* the invariant or property it must violate: if TLC does not report that *)
(* violation, the invariant is vacuous on the models we check.  The bug   *)
(* models run the fifo policy with its ghost clock (CheckSpec, GhostView).*)
(* Defects of the other policies: EmbeddingCacheGdsfBugs,                 *)
(* EmbeddingCacheS3FifoBugs.                                              *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifoCheck

\* TypeOK: pin decrements the counter on every pin, not only when the entry
\* was evictable.
PinStepAlwaysDecrements(k) ==
    /\ entries'   = [entries EXCEPT ![k].pins = @ + 1]
    /\ evictable' = evictable - Size(k)
    /\ UNCHANGED free

\* BlockConservationInv: discard forgets to return the entry's blocks.
DiscardKeepsBlocks(k) ==
    /\ k \in Live
    /\ entries[k].pins = NotReady
    /\ entries' = [j \in Live \ {k} |-> entries[j]]
    /\ UNCHANGED <<free, evictable>>
    /\ lastOp' = [op |-> "Discard", key |-> k, n |-> 0]

\* EvictableSetInv: every unpin appends to the queue (double append), not
\* just the one that brings the pin count to 0.
UnpinAlwaysAppends(k) == Unpin(k) /\ policy' = Release(policy, k, Size(k))

\* EvictableCountInv: mark_ready forgets the counter.
MarkReadyForgetsCount(k) ==
    /\ k \in Live
    /\ entries[k].pins = NotReady
    /\ entries' = [entries EXCEPT ![k].pins = 0]
    /\ UNCHANGED <<free, evictable>>
    /\ lastOp' = [op |-> "MarkReady", key |-> k, n |-> 0]

\* QuiescenceInv: the unpin that reaches 0 forgets to add the entry's
\* blocks back to the counter, so they are neither free nor evictable.
UnpinForgetsCount(k) ==
    /\ k \in Live
    /\ entries[k].pins > 0
    /\ entries' = [entries EXCEPT ![k].pins = @ - 1]
    /\ UNCHANGED <<free, evictable>>
    /\ lastOp' = [op |-> "Unpin", key |-> k, n |-> 0]

\* HeldEntriesInv: has_held_entries counts only not-ready entries as held,
\* forgetting the pinned ones.
HasHeldEntriesNotReadyOnly == \E k \in Live : entries[k].pins = NotReady

\* EvictOldestFirstProp: eviction pops the newest queued entry (LIFO).
EvictOneNewest(p, sz) ==
    [victim |-> p.queue[Len(p.queue)],
     p |-> [p EXCEPT !.queue = SubSeq(@, 1, Len(@) - 1)]]

\* EvictOldestFirstProp, not refinement: mark_ready and the last unpin put
\* the key at the HEAD of the queue, so the newest entry is evicted first.
\* Every shared invariant and property, and EvictableSetInv, still hold.
ReadyAtHead(p, k, s)   == [p EXCEPT !.queue = <<k>> \o @]
ReleaseAtHead(p, k, s) == [p EXCEPT !.queue = <<k>> \o @]

\* EvictOnlyAsNeededProp: the eviction loop tests `<=` instead of `<`, so
\* it evicts one entry more than needed whenever one is left to evict.
EnoughOneTooMany(n, got) == FreeCount + SetBlocks(got) > n

\* FailedAllocUnchangedProp: alloc evicts before the fail-fast check, so a
\* failing alloc has already evicted every evictable entry.
AllocFailEvicts(k, n) ==
    /\ k \notin Live
    /\ n \in 0 .. N
    /\ ~CanAlloc(n)
    /\ entries'   = [j \in Live \ Evictable |-> entries[j]]
    /\ free'      = FreeAfterAlloc(0, Evictable, {}, SetBlocks(Evictable))
    /\ evictable' = 0
    /\ lastOp' = [op |-> "AllocFail", key |-> k, n |-> n]

\* AllocFailsOnlyWhenShortProp: the fail-fast check looks at free blocks
\* only, so alloc fails although eviction could make room.
CanAllocFreeOnly(n) == FreeCount >= n

\* HeldBlocksStableProp: pin forgets to take the entry off the queue, so a
\* pinned entry is evicted and its blocks handed to the next alloc.
HoldKeepsQueued(p, k) == p
=============================================================================
