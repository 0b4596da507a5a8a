------------------------ MODULE EmbeddingCachePolicy ------------------------
(***************************************************************************)
(* The glue between the core and an eviction policy, written once: the     *)
(* core's actions (EmbeddingCache) composed with the policy's hooks        *)
(* (spec/POLICIES.md, section 1).  Every policy module                     *)
(* (EmbeddingCacheFifo, EmbeddingCacheGdsf, EmbeddingCacheS3Fifo) defines *)
(* the hooks under the names declared below and imports this module with  *)
(* a bare `INSTANCE EmbeddingCachePolicy` (implicit substitution: each     *)
(* hook by the policy's definition of the same name).                     *)
(*                                                                         *)
(* The policy's state is ONE variable, policy: a record whose fields are  *)
(* the policy's variables (fifo [queue]; gdsf [prio, freq, order, clock]; *)
(* s3fifo [small, main, ghost, freq, home]).  The hooks are constant-     *)
(* level: functions of a policy state and their arguments, never of the   *)
(* cache's variables (what they need, a size, is passed in), so that the  *)
(* instantiation passes SANY's level check.                               *)
(*                                                                         *)
(* The hooks, their arguments and what each means (Python and TLA+ side  *)
(* by side) have one home: spec/POLICIES.md, section 1; the CONSTANTS     *)
(* below declare them.                                                    *)
(*                                                                         *)
(* Bug models override a definition of this module or of the core from   *)
(* their config with `Op <- [EmbeddingCachePolicy] BuggyOp` (or           *)
(* `[EmbeddingCache]`): reached through the INSTANCE, a plain `Op <-`     *)
(* would replace only the root's copy of the name, not the one the        *)
(* actions call.  A hook is overridden plainly (`Hold <- BuggyHold`): it  *)
(* is the policy module's own definition.                                 *)
(***************************************************************************)
EXTENDS EmbeddingCacheReductions

CONSTANTS
    PInit, Admit(_, _, _), Forget(_, _), Ready(_, _, _), Hit(_, _),
    Hold(_, _), Release(_, _, _), HasVictim(_), EvictOne(_, _)

VARIABLE
    policy      \* the policy's state: a record of its variables (above)

fullVars == <<entries, free, evictable, lastOp, policy>>

\* The sizes of the live keys (what EvictOne may read).
Sizes == [k \in Live |-> Size(k)]

\* Enough blocks are free once the victims got are evicted (the loop test
\* of _evict_until).
Enough(n, got) == FreeCount + SetBlocks(got) >= n

\* The eviction loop: evict until n blocks are free (or nothing is left).
RECURSIVE EvictLoop(_, _, _, _)
EvictLoop(p, n, got, sz) ==
    IF Enough(n, got) \/ ~HasVictim(p) THEN [victims |-> got, p |-> p]
    ELSE LET r == EvictOne(p, sz) IN EvictLoop(r.p, n, got \cup {r.victim}, sz)

\* The eviction sub-step of alloc(n): the victims and the policy state after.
Evict(n) == EvictLoop(policy, n, {}, Sizes)

CacheInit == Init /\ policy = PInit

\* alloc(k, n) after the eviction ev ([victims, p]: the victims and the
\* policy state after them): take any blocks S, admit k.
CacheAllocAfter(k, n, ev) ==
    /\ k \notin Live
    /\ CanAlloc(n)
    /\ \E S \in BlockChoices :
           /\ AllocStep(k, n, ev.victims, S)
           /\ policy' = Admit(ev.p, k, n)

\* alloc(k, n): evict the policy's victims, take any blocks S, admit k (the
\* eviction is computed once for all S).
CacheAlloc(k, n) == CacheAllocAfter(k, n, Evict(n))

CacheAllocFail(k, n) == AllocFail(k, n) /\ UNCHANGED policy

\* alloc(k, n) declined by an admission filter (tla/admission/): nothing
\* changes, the policy is not told. Not in CacheNext: only a filtered
\* cache declines, and its filter decides when.
CacheAllocDecline(k, n) == AllocDecline(k, n) /\ UNCHANGED policy

\* The same, of a cache with contiguity K: a decline of an alloc that would
\* evict only extra victims too (tla/combined/).
CacheAllocDeclineUnder(k, n, K) == AllocDeclineUnder(k, n, K) /\ UNCHANGED policy

CacheMarkReady(k) == MarkReady(k) /\ policy' = Ready(policy, k, Size(k))

\* A use (PinStep) of the ready entry k: hold on the first pin, then hit.
Use(p, k) == IF entries[k].pins = 0 THEN Hit(Hold(p, k), k) ELSE Hit(p, k)

CachePin(k) == Pin(k) /\ policy' = Use(policy, k)

CachePinIfReady(k) ==
    /\ PinIfReady(k)
    /\ IF PinIfReadyHits(k) THEN policy' = Use(policy, k) ELSE UNCHANGED policy

CacheUnpin(k) ==
    /\ Unpin(k)
    /\ IF entries[k].pins = 1 THEN policy' = Release(policy, k, Size(k))
                              ELSE UNCHANGED policy

CacheDiscard(k) == Discard(k) /\ policy' = Forget(policy, k)

CacheNext ==
    \/ \E k \in Keys, n \in 0 .. N : CacheAlloc(k, n)
    \/ \E k \in Keys, n \in 0 .. N : CacheAllocFail(k, n)
    \/ \E k \in Keys : CacheMarkReady(k)
    \/ \E k \in Keys : CachePin(k)
    \/ \E k \in Keys : CachePinIfReady(k)
    \/ \E k \in Keys : CacheUnpin(k)
    \/ \E k \in Keys : CacheDiscard(k)

CacheSpec == CacheInit /\ [][CacheNext]_fullVars

\* The state without lastOp (no action reads lastOp): README.md.
PolicyHistoryView == <<cacheVars, policy>>

\* The core spec, with the policy's variable hidden (not mentioned).
Core == INSTANCE EmbeddingCache
CoreSpec == Core!Spec
\* The core spec of a filtered cache: Spec plus declines (tla/admission/).
CoreFilteredSpec == Core!FilteredSpec
=============================================================================
