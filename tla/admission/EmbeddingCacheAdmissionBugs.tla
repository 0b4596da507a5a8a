-------------------- MODULE EmbeddingCacheAdmissionBugs --------------------
(***************************************************************************)
(* Realistic defects of an admission filter, each a drop-in replacement   *)
(* for one operator of EmbeddingCacheAdmission: a bug model's config      *)
(* substitutes it (`Op <- [EmbeddingCacheAdmission] BuggyOp`) and checks  *)
(* only the invariant or property it must break; tla/models.json states   *)
(* each defect and its expectation.  The bug models run fifo               *)
(* (models/MCAdmissionBugs.tla).                                           *)
(***************************************************************************)
EXTENDS EmbeddingCacheAdmission

\* AllocDeclinesOnlyWhenEvictingProp: the filter is asked on every alloc
\* that can fit, so a first-seen key is declined even when enough blocks
\* are free and nothing would be evicted.
DeclinesWithoutEvicting(k, n) ==
    /\ Glue!CanAlloc(n) /\ k \notin AtDoor
    /\ k \notin Glue!Live
    /\ n \in 0 .. N
    /\ UNCHANGED <<entries, free, evictable, policy>>
    /\ lastOp' = [op |-> "AllocDecline", key |-> k, n |-> n]
    /\ door' = Remember(door, k)

\* DoorkeeperRuleProp: a decline forgets to remember its key, so the
\* second request is declined again (and every later one).
DeclineForgetsDoor(k, n) ==
    /\ Declines(k, n)
    /\ Glue!CacheAllocDecline(k, n)
    /\ UNCHANGED door

\* DoorHoldsAbsentKeysInv: an admitted key stays at the door, so its next
\* alloc after an eviction is let in without the doorkeeper's second look.
AdmitKeepsDoor(k, n) ==
    /\ ~Declines(k, n)
    /\ Glue!CacheAlloc(k, n)
    /\ UNCHANGED door
=============================================================================
