------------------------ MODULE EmbeddingCacheCounts ------------------------
(***************************************************************************)
(* The counts-level abstraction of EmbeddingCache: an entry records how    *)
(* many blocks it holds instead of which, and the free pool is a number.  *)
(* The block-level spec refines this one under the mapping                *)
(*     entries[k].size <- Cardinality(entries[k].blocks)                   *)
(*     free            <- Cardinality(free)                                *)
(* (checked by TLC in MCRefinement).  Because no operation of the cache    *)
(* distinguishes two block ids (an alloc may take any free blocks), a     *)
(* block-level state is determined up to a renaming of block ids by its   *)
(* counts image whenever blocks are conserved; so this spec is the        *)
(* quotient of the block-level spec by block renaming, and it is what     *)
(* the large model checks.  Actions and invariants keep their names.      *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    Keys,       \* the content identities (mm_hash values) an entry may have
    N,          \* the pool size in blocks
    MaxPins     \* model bound on nested pins of one entry (unbounded in code)

ASSUME KeysAssumption    == Keys # {}
ASSUME PoolAssumption    == N \in Nat
ASSUME MaxPinsAssumption == MaxPins \in Nat \ {0}

NotReady == -1             \* the pin count of a not-ready entry (as in code)

VARIABLES
    entries,    \* live key -> [size, pins]; DOMAIN = live keys
    free,       \* the number of free blocks
    queue,      \* ready+unpinned keys, oldest first
    evictable,  \* the evictable-block counter
    lastOp      \* history: last operation [op, key, n]; no action reads it

cacheVars == <<entries, free, queue, evictable>>
vars      == <<entries, free, queue, evictable, lastOp>>

\* The names of the operations, as recorded in lastOp.
OpNames == {"Init", "Alloc", "AllocFail", "MarkReady", "Pin", "PinIfReady",
            "Unpin", "Discard"}

-----------------------------------------------------------------------------
(* Helpers.                                                                *)

\* The set of elements of a sequence.
Range(s) == {s[i] : i \in DOMAIN s}

\* The live keys.
Live == DOMAIN entries

\* The number of blocks held by live key k.
Size(k) == entries[k].size

\* Sum of the entry sizes along a sequence of live keys.
RECURSIVE SeqBlocks(_)
SeqBlocks(s) == IF s = <<>> THEN 0 ELSE Size(Head(s)) + SeqBlocks(Tail(s))

\* Sum of the sizes of a set of live keys.
RECURSIVE SetBlocks(_)
SetBlocks(K) == IF K = {} THEN 0
                ELSE LET k == CHOOSE x \in K : TRUE
                     IN  Size(k) + SetBlocks(K \ {k})

\* The sequence s without any occurrence of key k.
Remove(s, k) == SelectSeq(s, LAMBDA x : x # k)

\* The fail-fast check of alloc: free plus evictable blocks suffice.
CanAlloc(n) == free + evictable >= n

\* The smallest number of queue heads whose eviction frees n blocks.
NeedEvict(n) ==
    CHOOSE i \in 0 .. Len(queue) :
        /\ free + SeqBlocks(SubSeq(queue, 1, i)) >= n
        /\ \A j \in 0 .. i - 1 : free + SeqBlocks(SubSeq(queue, 1, j)) < n

\* Evict: the eviction sub-step of alloc (victims oldest first, rest).
Evict(n) == [victims |-> SubSeq(queue, 1, NeedEvict(n)),
             rest    |-> SubSeq(queue, NeedEvict(n) + 1, Len(queue))]

\* has_held_entries(): len(_entries) != len(_entries_free_list).
HasHeldEntries == Cardinality(Live) # Len(queue)

-----------------------------------------------------------------------------
TypeOK ==
    /\ Live \subseteq Keys
    /\ \A k \in Live : /\ entries[k].size \in 0 .. N
                       /\ entries[k].pins \in NotReady .. MaxPins
    /\ free \in 0 .. N
    /\ queue \in Seq(Keys)
    /\ evictable \in 0 .. N
    /\ lastOp.op \in OpNames
    /\ lastOp.n \in 0 .. N

Init ==
    /\ entries   = [k \in {} |-> [size |-> 0, pins |-> NotReady]]
    /\ free      = N
    /\ queue     = <<>>
    /\ evictable = 0
    /\ lastOp    = [op |-> "Init", key |-> "none", n |-> 0]

\* alloc(k, n) that returns an entry of n blocks, evicting oldest first.
Alloc(k, n) ==
    /\ k \notin Live
    /\ n \in 0 .. N
    /\ CanAlloc(n)
    /\ LET ev      == Evict(n)
           victims == Range(ev.victims)
       IN  /\ entries' = [j \in (Live \ victims) \cup {k} |->
                             IF j = k THEN [size |-> n, pins |-> NotReady]
                                      ELSE entries[j]]
           /\ free'      = free + SeqBlocks(ev.victims) - n
           /\ queue'     = ev.rest
           /\ evictable' = evictable - SeqBlocks(ev.victims)
    /\ lastOp' = [op |-> "Alloc", key |-> k, n |-> n]

\* alloc(k, n) that returns None: the fail-fast check fails, nothing changes.
AllocFail(k, n) ==
    /\ k \notin Live
    /\ n \in 0 .. N
    /\ ~CanAlloc(n)
    /\ UNCHANGED cacheVars
    /\ lastOp' = [op |-> "AllocFail", key |-> k, n |-> n]

\* mark_ready(k): a not-ready entry becomes ready and joins the queue's end.
MarkReady(k) ==
    /\ k \in Live
    /\ entries[k].pins = NotReady
    /\ entries'   = [entries EXCEPT ![k].pins = 0]
    /\ queue'     = Append(queue, k)
    /\ evictable' = evictable + Size(k)
    /\ UNCHANGED free
    /\ lastOp' = [op |-> "MarkReady", key |-> k, n |-> 0]

\* The state change shared by pin and pin_if_ready on a ready entry.
PinStep(k) ==
    /\ entries' = [entries EXCEPT ![k].pins = @ + 1]
    /\ IF entries[k].pins = 0
          THEN /\ queue'     = Remove(queue, k)
               /\ evictable' = evictable - Size(k)
          ELSE UNCHANGED <<queue, evictable>>
    /\ UNCHANGED free

\* pin(k): pin a ready entry (nested pins up to the model bound MaxPins).
Pin(k) ==
    /\ k \in Live
    /\ entries[k].pins >= 0
    /\ entries[k].pins < MaxPins
    /\ PinStep(k)
    /\ lastOp' = [op |-> "Pin", key |-> k, n |-> 0]

\* pin_if_ready(k): pins k if live and ready; otherwise a query.
PinIfReady(k) ==
    /\ IF k \in Live /\ entries[k].pins >= 0
          THEN /\ entries[k].pins < MaxPins
               /\ PinStep(k)
          ELSE UNCHANGED cacheVars
    /\ lastOp' = [op |-> "PinIfReady", key |-> k, n |-> 0]

\* unpin(k): drop one pin; the unpin that reaches 0 appends k to the queue.
Unpin(k) ==
    /\ k \in Live
    /\ entries[k].pins > 0
    /\ entries' = [entries EXCEPT ![k].pins = @ - 1]
    /\ IF entries[k].pins = 1
          THEN /\ queue'     = Append(queue, k)
               /\ evictable' = evictable + Size(k)
          ELSE UNCHANGED <<queue, evictable>>
    /\ UNCHANGED free
    /\ lastOp' = [op |-> "Unpin", key |-> k, n |-> 0]

\* discard(k): drop a not-ready entry and return its blocks to the pool.
Discard(k) ==
    /\ k \in Live
    /\ entries[k].pins = NotReady
    /\ entries' = [j \in Live \ {k} |-> entries[j]]
    /\ free'    = free + Size(k)
    /\ UNCHANGED <<queue, evictable>>
    /\ lastOp' = [op |-> "Discard", key |-> k, n |-> 0]

Next ==
    \/ \E k \in Keys, n \in 0 .. N : Alloc(k, n)
    \/ \E k \in Keys, n \in 0 .. N : AllocFail(k, n)
    \/ \E k \in Keys : MarkReady(k)
    \/ \E k \in Keys : Pin(k)
    \/ \E k \in Keys : PinIfReady(k)
    \/ \E k \in Keys : Unpin(k)
    \/ \E k \in Keys : Discard(k)

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* State invariants (the counts image of the block-level ones).            *)

\* Free blocks plus the blocks of all live entries make up the pool.
BlockConservationInv == free + SetBlocks(Live) = N

\* The queue holds exactly the ready+unpinned entries, each once.
EvictQueueInv ==
    /\ Range(queue) = {k \in Live : entries[k].pins = 0}
    /\ Len(queue) = Cardinality(Range(queue))

\* The evictable-block counter equals the total blocks of the queued entries.
EvictableCountInv == evictable = SeqBlocks(queue)

\* has_held_entries() is true iff some entry is not-ready or pinned.
HeldEntriesInv == HasHeldEntries <=> \E k \in Live : entries[k].pins # 0

-----------------------------------------------------------------------------
(* Action properties, checked on every step.  lastOp' names the step.      *)

\* The entries an Alloc step evicted.
Evicted == IF lastOp'.op = "Alloc" THEN Live \ DOMAIN entries' ELSE {}

\* The index of key k in the (pre-state) queue, 0 if absent.
QueuePos(k) == IF k \in Range(queue)
                  THEN CHOOSE i \in DOMAIN queue : queue[i] = k ELSE 0

\* An alloc evicts only ready+unpinned entries, and only a prefix of the
\* queue (oldest first); the rest of the queue keeps its order.
EvictOldestFirstProp ==
    [][lastOp'.op = "Alloc" =>
        /\ \A v \in Evicted : entries[v].pins = 0
        /\ \E i \in 0 .. Len(queue) :
               /\ Evicted = Range(SubSeq(queue, 1, i))
               /\ queue' = SubSeq(queue, i + 1, Len(queue))]_vars

\* An alloc evicts no more entries than it needs: before the last victim was
\* evicted, free blocks were still too few.
EvictOnlyAsNeededProp ==
    [][lastOp'.op = "Alloc" /\ Evicted # {} =>
        /\ Evicted \subseteq Range(queue)
        /\ LET last == CHOOSE v \in Evicted :
                           \A w \in Evicted : QueuePos(w) <= QueuePos(v)
           IN  free + SetBlocks(Evicted \ {last}) < lastOp'.n
      ]_vars

\* An alloc that returns None changes nothing.
FailedAllocUnchangedProp ==
    [][lastOp'.op = "AllocFail" => UNCHANGED cacheVars]_vars

\* An alloc returns None iff free + evictable blocks < n.
AllocFailsOnlyWhenShortProp ==
    [][/\ lastOp'.op = "AllocFail" => free + SeqBlocks(queue) < lastOp'.n
       /\ lastOp'.op = "Alloc" => free + SeqBlocks(queue) >= lastOp'.n]_vars

\* A pinned or not-ready entry keeps its blocks (here: their number) while
\* it is live, and a pinned entry stays live.  (Which blocks are not handed
\* to another entry is checked at block level only.)
HeldBlocksStableProp ==
    [][\A k \in Live :
          entries[k].pins # 0 =>
              /\ k \in DOMAIN entries' => entries'[k].size = entries[k].size
              /\ entries[k].pins > 0 => k \in DOMAIN entries']_vars

-----------------------------------------------------------------------------
(* Model-checking aids: the quotient by key renaming.                      *)

\* All state invariants together.
WellFormed ==
    /\ TypeOK
    /\ BlockConservationInv
    /\ EvictQueueInv
    /\ EvictableCountInv
    /\ HeldEntriesInv

\* The shapes an entry outside the queue can have: <<size, pins>>.
HeldShapes == (0 .. N) \X ({NotReady} \cup 1 .. MaxPins)

\* How many live entries outside the queue have each shape (a bag).
HeldBag == [p \in HeldShapes |->
               Cardinality({k \in Live \ Range(queue) :
                               <<Size(k), entries[k].pins>> = p})]

\* The sizes of the queued entries, oldest first.
QueueSizes == [i \in DOMAIN queue |-> Size(queue[i])]

\* Canonical under key renaming when well formed; raw state otherwise.
QuotientView ==
    IF WellFormed THEN <<"quotient", QueueSizes, HeldBag, free, evictable>>
                  ELSE <<"raw", cacheVars>>

THEOREM Spec => [](TypeOK /\ BlockConservationInv /\ EvictQueueInv
                   /\ EvictableCountInv /\ HeldEntriesInv)
=============================================================================
