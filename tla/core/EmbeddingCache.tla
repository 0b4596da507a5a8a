--------------------------- MODULE EmbeddingCache ---------------------------
(***************************************************************************)
(* The policy-agnostic core of vLLM's EmbeddingCache: a fixed pool of N    *)
(* blocks shared by named entries (keyed by content identity).             *)
(* spec/POLICIES.md, section "Core", is the agreed text.     *)
(*                                                                         *)
(* Entry lifecycle:  absent -> not-ready -> ready <-> pinned (nested)      *)
(*                                ^   |                                    *)
(*                                |   +-> absent (Discard)                 *)
(*                   ready+unpinned   -> absent (evicted inside Alloc)     *)
(*                                                                         *)
(* E, the evictable set, is the set of ready+unpinned live entries.  The  *)
(* core has NO eviction order: Alloc(k, n) may evict any set V of          *)
(* evictable entries that is enough and not more than needed.  Each       *)
(* eviction policy (EmbeddingCacheFifo, EmbeddingCacheGdsf,                *)
(* EmbeddingCacheS3Fifo) adds one variable, policy, and picks V through   *)
(* the glue EmbeddingCachePolicy; it refines this spec with policy hidden *)
(* (checked by TLC, models.json).                                         *)
(*                                                                         *)
(* One definition of every action, two block stores.  The constant Level *)
(* selects how blocks are represented:                                     *)
(*   "blocks": entries[k] = [blocks, pins], free = a set of block ids     *)
(*             (the code's state, read by the conformance checks);        *)
(*   "counts": entries[k] = [size, pins],   free = a number               *)
(*             (the quotient by block renaming: the large models).        *)
(* Only the section "Block store" below looks at Level; the actions,      *)
(* invariants and properties are written once against it.  The           *)
(* block-level spec refines the counts-level one under                    *)
(*   size <- Cardinality(blocks), free <- Cardinality(free)               *)
(* (MCRefinement).                                                         *)
(*                                                                         *)
(* Every public method of the Python class runs under one lock, so each is *)
(* one atomic step; eviction is part of the Alloc step.                    *)
(* Left out, on purpose: which free blocks an alloc takes (any n of the   *)
(* free+evicted ones); misuse (the code raises and changes nothing);      *)
(* `get` (a query, not a use); the callers (EmbeddingCacheCallers).       *)
(* Names follow spec/NAMES.md.                                             *)
(***************************************************************************)
EXTENDS EmbeddingCacheLib, EmbeddingCacheParams
\* EmbeddingCacheParams declares the constants Keys (the content
\* identities), N (the pool size), MaxPins (the model's bound on nested
\* pins), Level (the block store, above) and the variables entries, free,
\* evictable, lastOp (below).

ASSUME KeysAssumption    == Keys # {}
ASSUME PoolAssumption    == N \in Nat
ASSUME MaxPinsAssumption == MaxPins \in Nat \ {0}
ASSUME LevelAssumption   == Level \in {"blocks", "counts"}

Blocks   == 0 .. N - 1     \* the block ids of the pool
NotReady == -1             \* the pin count of a not-ready entry (as in code)

\* The variables: entries (live key -> [blocks, pins] or [size, pins];
\* DOMAIN = the live keys), free (the free blocks: a set of ids, or their
\* number), evictable (the evictable-block counter), lastOp (history: the
\* last operation [op, key, n]; no action reads it).
cacheVars == <<entries, free, evictable>>
vars      == <<entries, free, evictable, lastOp>>

\* The names of the operations, as recorded in lastOp.
OpNames == {"Init", "Alloc", "AllocFail", "AllocDecline", "MarkReady", "Pin",
            "PinIfReady", "Unpin", "Discard"}

-----------------------------------------------------------------------------
(* Block store: the only place that depends on Level.                      *)

IsBlocks == Level = "blocks"

\* The number of free blocks.
FreeCount == IF IsBlocks THEN Cardinality(free) ELSE free

\* The number of blocks held by live key k (len(entry.block_ids)).
Size(k) == IF IsBlocks THEN Cardinality(entries[k].blocks) ELSE entries[k].size

\* The free pool of the initial state.
InitFree == IF IsBlocks THEN {b \in Blocks : TRUE} ELSE N

\* The choices an alloc makes besides its victims: the block set S it takes
\* (a constant set, so that TLC splits Next into labelled Alloc actions).
\* At counts level there is nothing to choose: S = {}.
BlockChoices == IF IsBlocks THEN SUBSET Blocks ELSE {{}}

\* The blocks freed by evicting the live keys V (block level only).
FreedBlocks(V) == UNION {entries[v].blocks : v \in V}

\* S is a valid block choice for an alloc of n blocks evicting V.
TakeOK(n, V, S) ==
    IF IsBlocks THEN /\ S \subseteq free \cup FreedBlocks(V)
                     /\ Cardinality(S) = n
                ELSE S = {}

\* The record of a new (not-ready) entry of n blocks S.
NewEntry(n, S) == IF IsBlocks THEN [blocks |-> S, pins |-> NotReady]
                              ELSE [size |-> n, pins |-> NotReady]

\* The free pool after an alloc of n blocks S evicting V (sizes SizeV).
FreeAfterAlloc(n, V, S, sizeV) ==
    IF IsBlocks THEN (free \cup FreedBlocks(V)) \ S ELSE free + sizeV - n

\* The free pool after live key k returned its blocks.
FreeAfterDiscard(k) ==
    IF IsBlocks THEN free \cup entries[k].blocks ELSE free + Size(k)

\* The type of one entry record.
EntryTypeOK(e) ==
    /\ IF IsBlocks THEN e.blocks \subseteq Blocks ELSE e.size \in 0 .. N
    /\ e.pins \in NotReady .. MaxPins

\* The type of the free pool.
FreeTypeOK == IF IsBlocks THEN free \subseteq Blocks ELSE free \in 0 .. N

-----------------------------------------------------------------------------
(* Helpers.                                                                *)

\* (Range, Remove, Put, Drop, Min, Max: EmbeddingCacheLib.)

\* The live keys.
Live == DOMAIN entries

\* E: the evictable entries (ready and unpinned).
Evictable == {k \in Live : entries[k].pins = 0}

\* Sum of the sizes of a set of live keys.
RECURSIVE SetBlocks(_)
SetBlocks(K) == IF K = {} THEN 0
                ELSE LET k == CHOOSE x \in K : TRUE
                     IN  Size(k) + SetBlocks(K \ {k})

\* The fail-fast check of alloc: free plus evictable blocks (the counter)
\* suffice.
CanAlloc(n) == FreeCount + evictable >= n

\* V is a set of victims the core allows for an alloc of n blocks:
\* evictable, nothing when enough is free, enough, and not more than needed
\* (some victim could not have been spared; plain subset-minimality would
\* wrongly reject FIFO with mixed sizes).
VictimsOK(n, V) ==
    /\ V \subseteq Evictable
    /\ FreeCount >= n => V = {}
    /\ FreeCount + SetBlocks(V) >= n
    /\ V = {} \/ \E v \in V : FreeCount + SetBlocks(V \ {v}) < n

\* has_held_entries(): len(_entries) != len(policy).  Each policy's
\* EvictableSetInv says its structure holds exactly E, so len(policy) = |E|.
HasHeldEntries == Cardinality(Live) # Cardinality(Evictable)

-----------------------------------------------------------------------------
(* The actions.  A policy composes each with its hooks                     *)
(* (spec/POLICIES.md, section 1); it calls AllocStep                       *)
(* with the victims it chose, so the properties below judge its choice.   *)

TypeOK ==
    /\ Live \subseteq Keys
    /\ \A k \in Live : EntryTypeOK(entries[k])
    /\ FreeTypeOK
    /\ evictable \in 0 .. N
    /\ lastOp.op \in OpNames
    /\ lastOp.n \in 0 .. N

Init ==
    /\ entries   = [k \in {} |-> NewEntry(0, {})]
    /\ free      = InitFree
    /\ evictable = 0
    /\ lastOp    = [op |-> "Init", key |-> "none", n |-> 0]

\* alloc(k, n) that returns an entry holding blocks S after evicting V.
\* The victims are the caller's (the policy's) choice: not constrained here.
AllocStep(k, n, V, S) ==
    /\ k \notin Live
    /\ n \in 0 .. N
    /\ CanAlloc(n)
    /\ V \subseteq Live
    /\ TakeOK(n, V, S)
    /\ LET sizeV == SetBlocks(V)
       IN  /\ FreeCount + sizeV >= n
           /\ entries' = [j \in (Live \ V) \cup {k} |->
                             IF j = k THEN NewEntry(n, S) ELSE entries[j]]
           /\ free'      = FreeAfterAlloc(n, V, S, sizeV)
           /\ evictable' = evictable - sizeV
    /\ lastOp' = [op |-> "Alloc", key |-> k, n |-> n]

\* The core's alloc: any victims the core allows, any blocks (the form Next
\* uses; lastOp' first: when TLC checks a step against the core spec, as in
\* the refinement models, other k, n fail fast, and the victims and blocks
\* are only enumerated for the step's own k and n).
Alloc(k, n) ==
    /\ lastOp' = [op |-> "Alloc", key |-> k, n |-> n]
    /\ k \notin Live
    /\ \E V \in SUBSET Evictable :
           /\ VictimsOK(n, V)
           /\ \E S \in BlockChoices : AllocStep(k, n, V, S)

\* alloc(k, n) that returns None: the fail-fast check fails, nothing changes.
AllocFail(k, n) ==
    /\ k \notin Live
    /\ n \in 0 .. N
    /\ ~CanAlloc(n)
    /\ UNCHANGED cacheVars
    /\ lastOp' = [op |-> "AllocFail", key |-> k, n |-> n]

\* The alloc of n blocks would have to evict, and could: an admission
\* filter may decline it (spec/SPEC.md section 13).
WouldEvict(n) == FreeCount < n /\ CanAlloc(n)

\* Some n consecutive ids s .. s+n-1 are all in the block set F (n = 0:
\* always; block level).  The code's ExtentPool.has_run(n), on F = free.
HasRun(F, n) == \E s \in 0 .. N - n : \A b \in s .. s + n - 1 : b \in F

\* The alloc of n would evict anything under contiguity K, and could: a
\* needed victim (WouldEvict), or, when no free run holds n, an extra one
\* (spec/SPEC.md section 14.1; K = 0: WouldEvict exactly).
WouldEvictUnder(n, K) ==
    \/ WouldEvict(n)
    \/ /\ K > 0
       /\ CanAlloc(n)
       /\ Evictable # {}
       /\ ~HasRun(free, n)

\* alloc(k, n) that returns None because the admission filter of a cache
\* with contiguity K declined k: only an alloc that would evict, and
\* nothing changes.  Which ones are declined is the filter's rule
\* (tla/admission/); a cache without a filter never declines (Next has no
\* AllocDecline).
AllocDeclineUnder(k, n, K) ==
    /\ k \notin Live
    /\ n \in 0 .. N
    /\ WouldEvictUnder(n, K)
    /\ UNCHANGED cacheVars
    /\ lastOp' = [op |-> "AllocDecline", key |-> k, n |-> n]

\* A decline without contiguity: of an alloc that would have to evict.
AllocDecline(k, n) == AllocDeclineUnder(k, n, 0)

\* mark_ready(k): a not-ready entry becomes ready and joins E.
MarkReady(k) ==
    /\ k \in Live
    /\ entries[k].pins = NotReady
    /\ entries'   = [entries EXCEPT ![k].pins = 0]
    /\ evictable' = evictable + Size(k)
    /\ UNCHANGED free
    /\ lastOp' = [op |-> "MarkReady", key |-> k, n |-> 0]

\* The state change shared by pin and pin_if_ready on a ready entry (the
\* use, or "hit"): the first pin takes k out of E.
PinStep(k) ==
    /\ entries' = [entries EXCEPT ![k].pins = @ + 1]
    /\ evictable' = IF entries[k].pins = 0 THEN evictable - Size(k)
                                           ELSE evictable
    /\ UNCHANGED free

\* pin(k): pin a ready entry (nested pins up to the model bound MaxPins).
Pin(k) ==
    /\ k \in Live
    /\ entries[k].pins >= 0
    /\ entries[k].pins < MaxPins
    /\ PinStep(k)
    /\ lastOp' = [op |-> "Pin", key |-> k, n |-> 0]

\* pin_if_ready(k) pins k if it is live and ready; otherwise it is a query.
PinIfReadyHits(k) == k \in Live /\ entries[k].pins >= 0

PinIfReady(k) ==
    /\ IF PinIfReadyHits(k)
          THEN /\ entries[k].pins < MaxPins
               /\ PinStep(k)
          ELSE UNCHANGED cacheVars
    /\ lastOp' = [op |-> "PinIfReady", key |-> k, n |-> 0]

\* unpin(k): drop one pin; the unpin that reaches 0 puts k back into E.
Unpin(k) ==
    /\ k \in Live
    /\ entries[k].pins > 0
    /\ entries' = [entries EXCEPT ![k].pins = @ - 1]
    /\ evictable' = IF entries[k].pins = 1 THEN evictable + Size(k)
                                           ELSE evictable
    /\ UNCHANGED free
    /\ lastOp' = [op |-> "Unpin", key |-> k, n |-> 0]

\* discard(k): drop a not-ready entry and return its blocks to the pool.
Discard(k) ==
    /\ k \in Live
    /\ entries[k].pins = NotReady
    /\ entries' = [j \in Live \ {k} |-> entries[j]]
    /\ free'    = FreeAfterDiscard(k)
    /\ UNCHANGED evictable
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

\* What a cache with an admission filter may do: every step of Spec, and
\* declines (section 13 of spec/SPEC.md). Spec refines it: a filter only
\* adds None results, each of an alloc that would have evicted.
FilteredNext == Next \/ \E k \in Keys, n \in 0 .. N : AllocDecline(k, n)

FilteredSpec == Init /\ [][FilteredNext]_vars

-----------------------------------------------------------------------------
(* Contiguity (spec/SPEC.md section 14): an alloc may evict up to K        *)
(* victims beyond need while no free run of ids holds its n blocks.       *)
(* Block level only: a run is a set of consecutive ids.  The policy's    *)
(* exact loop, and the order of the extra victims, are the glue's and    *)
(* tla/contiguity/'s; here is what any contiguous alloc may do.          *)

\* (HasRun(F, n): n consecutive free ids, above with WouldEvictUnder.)

\* V are victims an alloc of n may evict under the bound K: what the core
\* allows without contiguity, or such a set (Need) plus at most K more,
\* the first of which was evicted because no free run held n after Need.
ContiguousVictimsOK(n, V, K) ==
    \/ VictimsOK(n, V)
    \/ /\ V \subseteq Evictable
       /\ \E Need \in SUBSET V :
              /\ VictimsOK(n, Need)
              /\ Cardinality(V \ Need) <= K
              /\ ~HasRun(free \cup FreedBlocks(Need), n)

\* The core's alloc under contiguity K: any victims ContiguousVictimsOK
\* allows, any blocks (as Alloc, lastOp' first).
ContiguousAlloc(k, n, K) ==
    /\ lastOp' = [op |-> "Alloc", key |-> k, n |-> n]
    /\ k \notin Live
    /\ \E V \in SUBSET Evictable :
           /\ ContiguousVictimsOK(n, V, K)
           /\ \E S \in BlockChoices : AllocStep(k, n, V, S)

\* What a cache with contiguity K may do: every step of Spec (Alloc is a
\* ContiguousAlloc whose victims VictimsOK allows), and the allocs that
\* evict beyond need.  Spec refines it.
ContiguousNext(K) == Next \/ \E k \in Keys, n \in 0 .. N : ContiguousAlloc(k, n, K)

ContiguousSpec(K) == Init /\ [][ContiguousNext(K)]_vars

\* What a cache with an admission filter and contiguity K may do (spec/SPEC.md
\* section 14.1): every step of ContiguousSpec(K), and declines of allocs
\* that would evict anything, needed or extra (a declined alloc evicts
\* nothing).  Spec, FilteredSpec and ContiguousSpec(K) refine it:
\* FilteredNext's declines are among these (WouldEvict implies
\* WouldEvictUnder), and Next is a disjunct of ContiguousNext(K).
ContiguousFilteredNext(K) ==
    ContiguousNext(K) \/ \E k \in Keys, n \in 0 .. N : AllocDeclineUnder(k, n, K)

ContiguousFilteredSpec(K) == Init /\ [][ContiguousFilteredNext(K)]_vars

-----------------------------------------------------------------------------
(* Shared state invariants: every policy keeps them.                       *)

\* The live keys whose blocks include block b (block level).
Owners(b) == {k \in Live : b \in entries[k].blocks}

\* Every block is free or owned by exactly one live entry, never both (at
\* counts level: free blocks plus the live entries' blocks make up N).
BlockConservationInv ==
    IF IsBlocks
       THEN \A b \in Blocks : IF b \in free THEN Owners(b) = {}
                                           ELSE Cardinality(Owners(b)) = 1
       ELSE free + SetBlocks(Live) = N

\* The evictable-block counter equals the total blocks of E.
EvictableCountInv == evictable = SetBlocks(Evictable)

\* has_held_entries() is true iff some entry is not-ready or pinned.
HeldEntriesInv == HasHeldEntries <=> \E k \in Live : entries[k].pins # 0

\* Quiescence: with no held entry, every block is free or evictable (so any
\* alloc of n <= N blocks can succeed; AllocEventuallySucceedsProp rests on
\* this).
QuiescenceInv == ~HasHeldEntries => FreeCount + evictable = N

-----------------------------------------------------------------------------
(* Shared action properties, checked on every step.  Each is [][A]_vars:  *)
(* A must hold on every step that changes vars; lastOp is among vars and  *)
(* every action sets lastOp' to its own record, so each step of the spec  *)
(* is checked (an AllocFail that changes nothing in the cache still      *)
(* changes lastOp, unless it repeats the previous step exactly, which is  *)
(* then a stuttering step of the same AllocFail).                         *)

\* The entries an Alloc step evicted.
Evicted == IF lastOp'.op = "Alloc" THEN Live \ DOMAIN entries' ELSE {}

\* An alloc evicts only evictable entries, nothing when enough is free,
\* enough, and not more than needed.
EvictOnlyAsNeededProp ==
    [][lastOp'.op = "Alloc" => VictimsOK(lastOp'.n, Evicted)]_vars

\* An alloc that returns None (short, or declined) changes nothing.
FailedAllocUnchangedProp ==
    [][lastOp'.op \in {"AllocFail", "AllocDecline"} => UNCHANGED cacheVars]_vars

\* (AllocDeclinesOnlyWhenEvictingProp, that a declined alloc would have
\* evicted, is the admission layer's: it depends on the contiguity bound,
\* tla/admission/EmbeddingCacheAdmission.tla.)

\* An alloc returns None iff free + evictable blocks < n (evictable blocks
\* counted from E itself, not from the counter).
AllocFailsOnlyWhenShortProp ==
    [][/\ lastOp'.op = "AllocFail" =>
              FreeCount + SetBlocks(Evictable) < lastOp'.n
       /\ lastOp'.op = "Alloc" =>
              FreeCount + SetBlocks(Evictable) >= lastOp'.n]_vars

\* The blocks of a pinned or not-ready entry are never handed to another
\* entry while it holds them, it keeps them while it is live, and a pinned
\* entry stays live.  (At counts level: it keeps their number.)
HeldBlocksStableProp ==
    [][\A k \in Live :
          entries[k].pins # 0 =>
              /\ k \in DOMAIN entries' => entries'[k] = [entries[k] EXCEPT !.pins = entries'[k].pins]
              /\ entries[k].pins > 0 => k \in DOMAIN entries'
              /\ IsBlocks =>
                     \A j \in DOMAIN entries' \ {k} :
                         entries'[j].blocks \cap entries[k].blocks = {}]_vars

-----------------------------------------------------------------------------
(* A liveness property of the cache's state, whatever its callers: each    *)
(* module of callers checks it under the fairness it states                *)
(* (core/EmbeddingCacheCallers.tla, tla/protocol/).                        *)

\* Every not-ready entry eventually becomes ready or is discarded.
SaveResolvesProp ==
    \A k \in Keys : (k \in Live /\ entries[k].pins = NotReady)
                        ~> (k \notin Live \/ entries[k].pins # NotReady)

-----------------------------------------------------------------------------
THEOREM Spec => [](TypeOK /\ BlockConservationInv /\ EvictableCountInv
                   /\ HeldEntriesInv /\ QuiescenceInv)
THEOREM Spec => EvictOnlyAsNeededProp /\ FailedAllocUnchangedProp
                /\ AllocFailsOnlyWhenShortProp /\ HeldBlocksStableProp
THEOREM Spec => FilteredSpec
THEOREM FilteredSpec => [](TypeOK /\ BlockConservationInv /\ EvictableCountInv
                           /\ HeldEntriesInv /\ QuiescenceInv)
THEOREM FilteredSpec => FailedAllocUnchangedProp
THEOREM \A K \in Nat : Spec => ContiguousSpec(K)
THEOREM \A K \in Nat : FilteredSpec => ContiguousFilteredSpec(K)
THEOREM \A K \in Nat : ContiguousSpec(K) => ContiguousFilteredSpec(K)
=============================================================================
