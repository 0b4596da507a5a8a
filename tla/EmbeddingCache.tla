--------------------------- MODULE EmbeddingCache ---------------------------
(***************************************************************************)
(* The block-level specification of vLLM's EmbeddingCache: a fixed pool of *)
(* N block ids shared by named entries (keyed by content identity).        *)
(*                                                                         *)
(* Entry lifecycle:  absent -> not-ready -> ready <-> pinned (nested)      *)
(*                                ^   |                                    *)
(*                                |   +-> absent (Discard)                 *)
(*                   ready+unpinned   -> absent (evicted inside Alloc)     *)
(*                                                                         *)
(* Every public method of the Python class runs under one lock, so each is *)
(* one atomic step here; the eviction loop `_evict_until` runs inside     *)
(* Alloc and is therefore part of the Alloc step (operator Evict).         *)
(*                                                                         *)
(* Modelled: alloc (success and fail-fast), mark_ready, pin, pin_if_ready, *)
(* unpin, discard, has_held_entries (a state function), the FIFO eviction  *)
(* queue and the evictable-block counter.                                  *)
(*                                                                         *)
(* Left out, on purpose:                                                   *)
(*  - which free blocks an alloc takes: any subset of the right size may   *)
(*    be taken, so the LIFO stack of the code (and any other allocator) is *)
(*    a refinement of this spec;                                           *)
(*  - misuse (duplicate alloc, n > N, pin of a not-ready entry, ...): the  *)
(*    code raises and changes nothing, so misuse is not an action;         *)
(*  - `get`, a read-only query;                                            *)
(*  - the callers: see EmbeddingCacheCallers for the liveness model.       *)
(*                                                                         *)
(* Names follow spec/NAMES.md.                                             *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    Keys,       \* the content identities (mm_hash values) an entry may have
    N,          \* the pool size; block ids are 0 .. N-1
    MaxPins     \* model bound on nested pins of one entry (unbounded in code)

ASSUME KeysAssumption    == Keys # {}
ASSUME PoolAssumption    == N \in Nat
ASSUME MaxPinsAssumption == MaxPins \in Nat \ {0}

Blocks   == 0 .. N - 1     \* the block ids of the pool
NotReady == -1             \* the pin count of a not-ready entry (as in code)

VARIABLES
    entries,    \* live key -> [blocks, pins]; DOMAIN = live keys (_entries)
    free,       \* the set of free block ids (_free_blocks, order abstracted)
    queue,      \* ready+unpinned keys, oldest first (_entries_free_list)
    evictable,  \* the evictable-block counter (_evictable_block_count)
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

\* The number of blocks held by live key k (len(entry.block_ids)).
Size(k) == Cardinality(entries[k].blocks)

\* Sum of the entry sizes along a sequence of live keys.
RECURSIVE SeqBlocks(_)
SeqBlocks(s) == IF s = <<>> THEN 0 ELSE Size(Head(s)) + SeqBlocks(Tail(s))

\* The sequence s without any occurrence of key k (del free_list[k]).
Remove(s, k) == SelectSeq(s, LAMBDA x : x # k)

\* The fail-fast check of alloc: free plus evictable blocks suffice.
CanAlloc(n) == Cardinality(free) + evictable >= n

\* The smallest number of queue heads whose eviction frees n blocks
\* (the number of iterations of the `while` loop in _evict_until).
NeedEvict(n) ==
    CHOOSE i \in 0 .. Len(queue) :
        /\ Cardinality(free) + SeqBlocks(SubSeq(queue, 1, i)) >= n
        /\ \A j \in 0 .. i - 1 :
               Cardinality(free) + SeqBlocks(SubSeq(queue, 1, j)) < n

\* Evict: the eviction sub-step of alloc, as the victims (oldest first) and
\* the queue left behind.  Only defined when CanAlloc(n).
Evict(n) == [victims |-> SubSeq(queue, 1, NeedEvict(n)),
             rest    |-> SubSeq(queue, NeedEvict(n) + 1, Len(queue))]

\* The blocks an alloc of n blocks may choose from: free plus evicted.
Pool(n) == free \cup UNION {entries[v].blocks : v \in Range(Evict(n).victims)}

\* The block sets an alloc of n blocks may take (any n of the pool).
AllocChoices(n) ==
    IF CanAlloc(n) THEN {S \in SUBSET Pool(n) : Cardinality(S) = n} ELSE {}

\* has_held_entries(): len(_entries) != len(_entries_free_list).
HasHeldEntries == Cardinality(Live) # Len(queue)

-----------------------------------------------------------------------------
TypeOK ==
    /\ Live \subseteq Keys
    /\ \A k \in Live : /\ entries[k].blocks \subseteq Blocks
                       /\ entries[k].pins \in NotReady .. MaxPins
    /\ free \subseteq Blocks
    /\ queue \in Seq(Keys)
    /\ evictable \in 0 .. N
    /\ lastOp.op \in OpNames
    /\ lastOp.n \in 0 .. N

Init ==
    /\ entries   = [k \in {} |-> [blocks |-> {}, pins |-> NotReady]]
    /\ free      = {b \in Blocks : TRUE}  \* a set value: prints as {0, 1, ...}
    /\ queue     = <<>>
    /\ evictable = 0
    /\ lastOp    = [op |-> "Init", key |-> "none", n |-> 0]

\* alloc(k, n) that returns an entry holding the blocks S: evict the oldest
\* ready+unpinned entries until n blocks are free, then take S.
Alloc(k, n, S) ==
    /\ k \notin Live
    /\ n \in 0 .. N
    /\ Cardinality(S) = n
    /\ CanAlloc(n)
    /\ LET ev      == Evict(n)
           victims == Range(ev.victims)
       IN  /\ S \subseteq Pool(n)
           /\ entries' = [j \in (Live \ victims) \cup {k} |->
                             IF j = k THEN [blocks |-> S, pins |-> NotReady]
                                      ELSE entries[j]]
           /\ free'      = Pool(n) \ S
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

\* pin_if_ready(k): pins k if it is live and ready; otherwise a query that
\* changes nothing (returns None or the not-ready entry).
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
    /\ free'    = free \cup entries[k].blocks
    /\ UNCHANGED <<queue, evictable>>
    /\ lastOp' = [op |-> "Discard", key |-> k, n |-> 0]

\* (S ranges over a constant set so that TLC splits Next into one action per
\* (k, n, S) and labels each step "Alloc", e.g. in -dump dot,actionlabels.)
Next ==
    \/ \E k \in Keys, n \in 0 .. N, S \in SUBSET Blocks : Alloc(k, n, S)
    \/ \E k \in Keys, n \in 0 .. N : AllocFail(k, n)
    \/ \E k \in Keys : MarkReady(k)
    \/ \E k \in Keys : Pin(k)
    \/ \E k \in Keys : PinIfReady(k)
    \/ \E k \in Keys : Unpin(k)
    \/ \E k \in Keys : Discard(k)

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* State invariants.                                                       *)

\* The live keys whose blocks include block b.
Owners(b) == {k \in Live : b \in entries[k].blocks}

\* Every block is either free or owned by exactly one live entry, never both.
BlockConservationInv ==
    \A b \in Blocks : IF b \in free THEN Owners(b) = {}
                                    ELSE Cardinality(Owners(b)) = 1

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
Evicted == IF lastOp'.op = "Alloc" THEN Live \ (DOMAIN entries' \ {lastOp'.key})
                                    ELSE {}

\* The index of key k in the (pre-state) queue, 0 if absent.
QueuePos(k) == IF k \in Range(queue)
                  THEN CHOOSE i \in DOMAIN queue : queue[i] = k ELSE 0

\* Sum of the (pre-state) sizes of a set of live keys.
RECURSIVE SetBlocks(_)
SetBlocks(K) == IF K = {} THEN 0
                ELSE LET k == CHOOSE x \in K : TRUE
                     IN  Size(k) + SetBlocks(K \ {k})

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
           IN  Cardinality(free) + SetBlocks(Evicted \ {last}) < lastOp'.n
      ]_vars

\* An alloc that returns None changes nothing.
FailedAllocUnchangedProp ==
    [][lastOp'.op = "AllocFail" => UNCHANGED cacheVars]_vars

\* An alloc returns None iff free + evictable blocks < n (evictable blocks
\* counted from the queue itself, not from the counter).
AllocFailsOnlyWhenShortProp ==
    [][/\ lastOp'.op = "AllocFail" =>
              Cardinality(free) + SeqBlocks(queue) < lastOp'.n
       /\ lastOp'.op = "Alloc" =>
              Cardinality(free) + SeqBlocks(queue) >= lastOp'.n]_vars

\* The blocks of a pinned or not-ready entry are never handed to another
\* entry while it holds them, and it keeps them while it is live.
HeldBlocksStableProp ==
    [][\A k \in Live :
          entries[k].pins # 0 =>
              /\ k \in DOMAIN entries' => entries'[k].blocks = entries[k].blocks
              /\ entries[k].pins > 0 => k \in DOMAIN entries'
              /\ \A j \in DOMAIN entries' \ {k} :
                     entries'[j].blocks \cap entries[k].blocks = {}]_vars

-----------------------------------------------------------------------------
THEOREM Spec => [](TypeOK /\ BlockConservationInv /\ EvictQueueInv
                   /\ EvictableCountInv /\ HeldEntriesInv)
THEOREM Spec => EvictOldestFirstProp /\ EvictOnlyAsNeededProp
                /\ FailedAllocUnchangedProp /\ AllocFailsOnlyWhenShortProp
                /\ HeldBlocksStableProp
=============================================================================
