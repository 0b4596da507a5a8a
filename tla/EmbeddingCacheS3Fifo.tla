------------------------ MODULE EmbeddingCacheS3Fifo ------------------------
(***************************************************************************)
(* Eviction policy "s3fifo" (Yang et al., SOSP 2023, adapted to pins).     *)
(* spec/POLICY_SEMANTICS.draft.md, section "s3fifo".  Same interface as   *)
(* EmbeddingCacheFifo (see there); the glue section is the same text.     *)
(*                                                                         *)
(* Two queues of E, small (S) and main (M), each key in its home's queue; *)
(* a ghost queue of recently evicted (non-live) keys with their sizes.    *)
(* admit: home M if the key is in the ghost (it leaves it), else S.       *)
(* ready: freq 0, append to home queue.  hit: freq Min(freq + 1, 3).      *)
(* hold: leave the home queue; release: append to it again.              *)
(* evict loop: if S is non-empty and (S holds >= SmallTarget blocks or M  *)
(* is empty): S's head moves to M (freq reset) if used, else is evicted   *)
(* into the ghost (trimmed to GhostCapacity blocks, oldest first);        *)
(* otherwise M's head is requeued with freq - 1 if used, else evicted.    *)
(* Order property: EvictProbationFirstProp (EmbeddingCacheS3FifoCheck).   *)
(***************************************************************************)
EXTENDS EmbeddingCache

CONSTANTS
    SmallTarget,    \* blocks S should hold (Max(1, N \div 10))
    GhostCapacity   \* blocks the ghost may record (N - SmallTarget)

ASSUME S3FifoAssumption == SmallTarget \in Nat \ {0} /\ GhostCapacity \in Nat

FreqCap == 3

VARIABLES
    small,      \* E homed in S, oldest first
    main,       \* E homed in M, oldest first
    ghost,      \* <<key, size>> of evicted keys, oldest first
    freq,       \* ready live keys -> 0 .. FreqCap
    home        \* live keys -> "S" or "M"

policyVars == <<small, main, ghost, freq, home>>
fullVars   == <<entries, free, evictable, lastOp, small, main, ghost, freq, home>>

GhostKeys(g) == {g[i][1] : i \in DOMAIN g}

RECURSIVE GhostBlocks(_)
GhostBlocks(g) == IF g = <<>> THEN 0 ELSE Head(g)[2] + GhostBlocks(Tail(g))

PolicyTypeOK ==
    /\ small \in Seq(Keys) /\ main \in Seq(Keys)
    /\ \A i \in DOMAIN ghost : ghost[i][1] \in Keys /\ ghost[i][2] \in 0 .. N
    /\ \A k \in DOMAIN freq : freq[k] \in 0 .. FreqCap
    /\ \A k \in DOMAIN home : home[k] \in {"S", "M"}
    /\ DOMAIN freq \subseteq Keys /\ DOMAIN home \subseteq Keys

\* The policy state as a record, its assignment, its initial value.
P == [small |-> small, main |-> main, ghost |-> ghost, freq |-> freq, home |-> home]
SetP(p) == /\ small' = p.small /\ main' = p.main /\ ghost' = p.ghost
           /\ freq' = p.freq /\ home' = p.home
PInit == /\ small = <<>> /\ main = <<>> /\ ghost = <<>>
         /\ freq = [k \in {} |-> 0] /\ home = [k \in {} |-> "S"]

-----------------------------------------------------------------------------
(* The hooks.                                                              *)

\* Append k to the queue of its home / remove it from there.
Enqueue(p, k) == IF p.home[k] = "S" THEN [p EXCEPT !.small = Append(@, k)]
                                    ELSE [p EXCEPT !.main = Append(@, k)]
Dequeue(p, k) == IF p.home[k] = "S" THEN [p EXCEPT !.small = Remove(@, k)]
                                    ELSE [p EXCEPT !.main = Remove(@, k)]

\* The ghost trimmed, oldest first, to at most GhostCapacity blocks.
RECURSIVE Trim(_)
Trim(g) == IF GhostBlocks(g) > GhostCapacity THEN Trim(Tail(g)) ELSE g

Admit(p, k) ==
    IF k \in GhostKeys(p.ghost)
       THEN [p EXCEPT !.home = Put(@, k, "M"),
                      !.ghost = SelectSeq(@, LAMBDA e : e[1] # k)]
       ELSE [p EXCEPT !.home = Put(@, k, "S")]
Forget(p, k)  == [p EXCEPT !.home = Drop(@, k)]
Ready(p, k)   == Enqueue([p EXCEPT !.freq = Put(@, k, 0)], k)
Hit(p, k)     == [p EXCEPT !.freq[k] = Min(@ + 1, FreqCap)]
Hold(p, k)    == Dequeue(p, k)
Release(p, k) == Enqueue(p, k)

HasVictim(p) == p.small # <<>> \/ p.main # <<>>

\* S is the queue to take from.
FromSmall(p) == p.small # <<>> /\ (SeqBlocks(p.small) >= SmallTarget \/ p.main = <<>>)

\* One eviction: move used heads until one head is evicted.
RECURSIVE EvictOne(_)
EvictOne(p) ==
    IF FromSmall(p)
       THEN LET k == Head(p.small) IN
            IF p.freq[k] >= 1
               THEN EvictOne([p EXCEPT !.small = Tail(@), !.main = Append(@, k),
                                       !.home[k] = "M", !.freq[k] = 0])
               ELSE [victim |-> k,
                     p |-> [p EXCEPT !.small = Tail(@),
                                     !.ghost = Trim(Append(@, <<k, Size(k)>>)),
                                     !.freq = Drop(@, k), !.home = Drop(@, k)]]
       ELSE LET k == Head(p.main) IN
            IF p.freq[k] >= 1
               THEN EvictOne([p EXCEPT !.main = Append(Tail(@), k),
                                       !.freq[k] = @ - 1])
               ELSE [victim |-> k,
                     p |-> [p EXCEPT !.main = Tail(@),
                                     !.freq = Drop(@, k), !.home = Drop(@, k)]]

PolicySize == Len(small) + Len(main)

\* small and main hold exactly E, each key once, each in its home's queue;
\* home is defined on the live keys, freq on the ready ones; the ghost
\* holds distinct non-live keys within its capacity.
EvictableSetInv ==
    /\ Range(small) \cup Range(main) = Evictable
    /\ Range(small) \cap Range(main) = {}
    /\ Len(small) = Cardinality(Range(small))
    /\ Len(main) = Cardinality(Range(main))
    /\ DOMAIN home = Live
    /\ \A k \in Range(small) : home[k] = "S"
    /\ \A k \in Range(main) : home[k] = "M"
    /\ DOMAIN freq = {k \in Live : entries[k].pins >= 0}
    /\ GhostKeys(ghost) \cap Live = {}
    /\ Len(ghost) = Cardinality(GhostKeys(ghost))
    /\ GhostBlocks(ghost) <= GhostCapacity
    /\ PolicySize = Cardinality(Evictable)

-----------------------------------------------------------------------------
(* Glue: the core actions composed with the hooks (same in every policy). *)

\* Enough blocks are free once the victims got are evicted (the loop test
\* of _evict_until).
Enough(n, got) == FreeCount + SetBlocks(got) >= n

\* The eviction loop: evict until n blocks are free (or nothing is left).
RECURSIVE EvictLoop(_, _, _)
EvictLoop(p, n, got) ==
    IF Enough(n, got) \/ ~HasVictim(p) THEN [victims |-> got, p |-> p]
    ELSE LET r == EvictOne(p) IN EvictLoop(r.p, n, got \cup {r.victim})

\* The eviction sub-step of alloc(n): the victims and the policy state after.
Evict(n) == EvictLoop(P, n, {})

CacheInit == Init /\ PInit

\* alloc(k, n) taking blocks S (evict, then admit k).
CacheAlloc(k, n, S) ==
    /\ k \notin Live
    /\ CanAlloc(n)
    /\ LET ev == Evict(n)
       IN  /\ AllocStep(k, n, ev.victims, S)
           /\ SetP(Admit(ev.p, k))

\* The same, for any blocks S: the eviction is computed once for all S.
CacheAllocAny(k, n) ==
    /\ k \notin Live
    /\ CanAlloc(n)
    /\ LET ev == Evict(n)
       IN  \E S \in BlockChoices :
               /\ AllocStep(k, n, ev.victims, S)
               /\ SetP(Admit(ev.p, k))

CacheAllocFail(k, n) == AllocFail(k, n) /\ UNCHANGED policyVars

CacheMarkReady(k) == MarkReady(k) /\ SetP(Ready(P, k))

\* A use (PinStep) of the ready entry k: hold on the first pin, then hit.
Use(p, k) == IF entries[k].pins = 0 THEN Hit(Hold(p, k), k) ELSE Hit(p, k)

CachePin(k) == Pin(k) /\ SetP(Use(P, k))

CachePinIfReady(k) ==
    /\ PinIfReady(k)
    /\ IF PinIfReadyHits(k) THEN SetP(Use(P, k)) ELSE UNCHANGED policyVars

CacheUnpin(k) ==
    /\ Unpin(k)
    /\ IF entries[k].pins = 1 THEN SetP(Release(P, k)) ELSE UNCHANGED policyVars

CacheDiscard(k) == Discard(k) /\ SetP(Forget(P, k))

CacheNext ==
    \/ \E k \in Keys, n \in 0 .. N : CacheAllocAny(k, n)
    \/ \E k \in Keys, n \in 0 .. N : CacheAllocFail(k, n)
    \/ \E k \in Keys : CacheMarkReady(k)
    \/ \E k \in Keys : CachePin(k)
    \/ \E k \in Keys : CachePinIfReady(k)
    \/ \E k \in Keys : CacheUnpin(k)
    \/ \E k \in Keys : CacheDiscard(k)

CacheSpec == CacheInit /\ [][CacheNext]_fullVars

\* The state without lastOp (no action reads lastOp): README.md.
PolicyHistoryView == <<cacheVars, policyVars>>

\* The core spec, with the policy's variables hidden (not mentioned).
Core == INSTANCE EmbeddingCache
CoreSpec == Core!Spec
=============================================================================
