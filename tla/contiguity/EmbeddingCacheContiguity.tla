--------------------- MODULE EmbeddingCacheContiguity ---------------------
(***************************************************************************)
(* Contiguity-aware eviction over the cache of any policy (spec/SPEC.md   *)
(* section 14).  An alloc of n blocks evicts the policy's victims, in its *)
(* order, while fewer than n blocks are free (as CacheAlloc), and then up *)
(* to Contiguity further victims, in the same order, while no free run of *)
(* consecutive ids holds n (the core's HasRun).  It stops at a run, after *)
(* Contiguity extra victims, or when the policy has no victim left.  The  *)
(* fail-fast check is the core's: nothing changes for a short alloc, and  *)
(* an alloc that fits evicts only extra victims.  Contiguity = 0 is       *)
(* CacheAlloc exactly.                                                    *)
(*                                                                        *)
(* Block level only (a run needs block ids).  One module for every        *)
(* policy, as EmbeddingCacheAdmission: the policy's hooks are constants   *)
(* and the glue is the named instance Glue, both declared in              *)
(* EmbeddingCacheLayer; a root extends a policy module and                *)
(* EmbeddingCacheContiguityParams and writes a bare                       *)
(* `INSTANCE EmbeddingCacheContiguity` (models/).  With the doorkeeper    *)
(* too: tla/combined/, which reuses ContiguousCacheAlloc and the          *)
(* properties below.                                                      *)
(*                                                                        *)
(* The loop refines the core's ContiguousSpec(Contiguity), policy hidden  *)
(* (ContiguityRefinesCore).  Names follow spec/NAMES.md, "Contiguity".    *)
(***************************************************************************)
EXTENDS EmbeddingCacheLayer, EmbeddingCacheContiguityParams, Sequences
\* EmbeddingCacheLayer declares the policy's hooks, the variable policy and
\* the glue's instance Glue.

ASSUME ContiguityAssumption == Contiguity \in Nat
ASSUME BlockLevelAssumption == Level = "blocks"

\* Every variable of the contiguity spec, listed (TLC 2.15 cannot evaluate
\* UNCHANGED of a tuple that reached a module through a bare INSTANCE).
contiguityVars == <<entries, free, evictable, lastOp, policy>>

-----------------------------------------------------------------------------
(* The rule.                                                              *)

\* The free blocks once the victims got are evicted.
FreeWith(got) == free \cup Glue!FreedBlocks(got)

\* Once enough is free, with extra victims evicted beyond need so far: one
\* more? (The code's evict_for_run; the bug models replace this operator.)
KeepEvicting(n, got, extra) == extra < Contiguity /\ ~Glue!HasRun(FreeWith(got), n)

\* The extra victim: the policy's next one (a bug model replaces this).
ExtraVictim(p, sz) == EvictOne(p, sz)

\* The contiguity loop: the victims got, the policy state p, and how many of
\* the victims were extra.
RECURSIVE ContiguousLoop(_, _, _, _, _)
ContiguousLoop(p, n, got, sz, extra) ==
    IF \/ ~HasVictim(p)
       \/ Glue!Enough(n, got) /\ ~KeepEvicting(n, got, extra)
       THEN [victims |-> got, p |-> p, extra |-> extra]
       ELSE LET more == Glue!Enough(n, got)
                r    == IF more THEN ExtraVictim(p, sz) ELSE EvictOne(p, sz)
            IN  ContiguousLoop(r.p, n, got \cup {r.victim}, sz,
                               IF more THEN extra + 1 ELSE extra)

\* The eviction sub-step of a contiguous alloc(n).
ContiguousEvict(n) == ContiguousLoop(policy, n, {}, Glue!Sizes, 0)

\* alloc(k, n) with contiguity: the contiguity loop's victims, any blocks.
ContiguousCacheAlloc(k, n) == Glue!CacheAllocAfter(k, n, ContiguousEvict(n))

ContiguityNext ==
    \/ \E k \in Keys, n \in 0 .. N : ContiguousCacheAlloc(k, n)
    \/ \E k \in Keys, n \in 0 .. N : Glue!CacheAllocFail(k, n)
    \/ \E k \in Keys : Glue!CacheMarkReady(k)
    \/ \E k \in Keys : Glue!CachePin(k)
    \/ \E k \in Keys : Glue!CachePinIfReady(k)
    \/ \E k \in Keys : Glue!CacheUnpin(k)
    \/ \E k \in Keys : Glue!CacheDiscard(k)

ContiguitySpec == Glue!CacheInit /\ [][ContiguityNext]_contiguityVars

\* The state without lastOp (no action reads it; README.md, Reductions),
\* the policy's state as its ViewState hook gives it (itself, or a
\* canonical form of a state that is not finite: gdsf's clock).
ContiguityViewOf(p) == <<entries, free, evictable, p>>
ContiguityView == ContiguityViewOf(ViewState(policy))

-----------------------------------------------------------------------------
(* Properties, stated against the policy's order, not the loop above.     *)

\* The policy's first m victims from state p, in its order (fewer when it
\* runs out).
RECURSIVE PolicyVictims(_, _, _)
PolicyVictims(p, m, sz) ==
    IF m = 0 \/ ~HasVictim(p) THEN <<>>
    ELSE LET r == EvictOne(p, sz) IN <<r.victim>> \o PolicyVictims(r.p, m - 1, sz)

\* How many victims an alloc of n needs (the glue's loop without contiguity).
NeedCount(n) == Cardinality(Glue!Evict(n).victims)

\* The first j victims of this step's alloc, as a set.
FirstVictims(j) == Range(PolicyVictims(policy, j, Glue!Sizes))

\* The victims of an alloc are the policy's first ones, in its order: the
\* extra victims are the ones it would have evicted next.
ContiguityOrderProp ==
    [][lastOp'.op = "Alloc" =>
           Glue!Evicted = FirstVictims(Cardinality(Glue!Evicted))]_contiguityVars

\* An alloc evicts at most Contiguity victims beyond those it needs.
EvictBeyondNeedBoundedProp ==
    [][lastOp'.op = "Alloc" =>
           Cardinality(Glue!Evicted) <= NeedCount(lastOp'.n) + Contiguity]_contiguityVars

\* Each extra victim was evicted while no free run held n.
ExtraEvictionOnlyWithoutRunProp ==
    [][lastOp'.op = "Alloc" =>
           \A j \in NeedCount(lastOp'.n) .. Cardinality(Glue!Evicted) - 1 :
               ~Glue!HasRun(FreeWith(FirstVictims(j)), lastOp'.n)]_contiguityVars

\* An alloc stops evicting extra victims only at a free run of n, after
\* Contiguity of them, or with no evictable entry left.
ExtraEvictionUntilRunProp ==
    [][lastOp'.op = "Alloc" =>
           \/ Glue!HasRun(FreeWith(Glue!Evicted), lastOp'.n)
           \/ Cardinality(Glue!Evicted) = NeedCount(lastOp'.n) + Contiguity
           \/ Glue!Evicted = Glue!Evictable]_contiguityVars

\* The cache with contiguity does only what the core allows under it (the
\* core's ContiguousSpec(Contiguity), written out: TLC 2.15 rejects a
\* temporal formula reached through an operator with arguments).
ContiguityRefinesCore ==
    Glue!Init /\ [][Glue!ContiguousNext(Contiguity)]_<<entries, free, evictable, lastOp>>
=============================================================================
