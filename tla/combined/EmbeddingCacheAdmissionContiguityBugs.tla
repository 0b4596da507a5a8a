-------------- MODULE EmbeddingCacheAdmissionContiguityBugs --------------
(***************************************************************************)
(* Realistic defects of composing the doorkeeper with contiguity, each a  *)
(* drop-in replacement for one operator of EmbeddingCacheAdmission that   *)
(* shows only with both rules: a bug model's config substitutes it        *)
(* (`Declines <- [EmbeddingCacheAdmission] Buggy`, or DeclineAlloc) and   *)
(* checks only the property it must break; tla/models.json states each    *)
(* defect and its expectation.  The bug models run fifo                   *)
(* (models/MCAdmissionContiguityBugs.tla).                                *)
(***************************************************************************)
EXTENDS EmbeddingCacheAdmissionContiguity

\* DoorkeeperRuleProp: the filter is asked only when phase 1 would evict, as
\* without contiguity, so a first-seen key whose blocks are free but only
\* in pieces is let in and evicts extra victims: a one-time item pushes
\* entries out (the composition this spec had before it counted extras).
DeclinesForNeedOnly(k, n) == Glue!WouldEvict(n) /\ k \notin AtDoor

\* AllocDeclinesOnlyWhenEvictingProp: an alloc that finds no free run is
\* taken for one that would evict extra victims even when no entry is
\* evictable, so it is declined (None, k remembered) although nothing would
\* be evicted.  (A DeclineAlloc of its own: the core's decline step would
\* not take it.)
DeclinesWithNothingToEvict(k, n) ==
    /\ k \notin Glue!Live
    /\ n \in 0 .. N
    /\ Glue!CanAlloc(n)
    /\ \/ Glue!WouldEvict(n)
       \/ Contiguity > 0 /\ ~Glue!HasRun(free, n)
    /\ k \notin AtDoor
    /\ UNCHANGED <<entries, free, evictable, policy>>
    /\ lastOp' = [op |-> "AllocDecline", key |-> k, n |-> n]
    /\ door' = Remember(door, k)

\* The contiguity loop alone, from victims got with extra of them extra:
\* the policy's next victims while KeepEvicting says so.
RECURSIVE ExtraLoop(_, _, _, _, _)
ExtraLoop(p, n, got, sz, extra) ==
    IF ~HasVictim(p) \/ ~KeepEvicting(n, got, extra) THEN [victims |-> got, p |-> p]
    ELSE LET r == ExtraVictim(p, sz)
         IN  ExtraLoop(r.p, n, got \cup {r.victim}, sz, extra + 1)

\* FailedAllocUnchangedProp: a declined alloc skips phase 1 but does not
\* return at once: it still runs the contiguity loop, then returns None.
DeclineEvictsExtras(k, n) ==
    /\ Declines(k, n)
    /\ k \notin Glue!Live
    /\ n \in 0 .. N
    /\ LET ev == ExtraLoop(policy, n, {}, Glue!Sizes, 0)
           V  == ev.victims
       IN  /\ entries' = [j \in Glue!Live \ V |-> entries[j]]
           /\ free' = free \cup Glue!FreedBlocks(V)
           /\ evictable' = evictable - Glue!SetBlocks(V)
           /\ policy' = ev.p
    /\ lastOp' = [op |-> "AllocDecline", key |-> k, n |-> n]
    /\ door' = Remember(door, k)
=============================================================================
