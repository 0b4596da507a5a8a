----------------------- MODULE EmbeddingCacheLeaseBugs -----------------------
(***************************************************************************)
(* Realistic defects of the lease layer, each a drop-in replacement for    *)
(* one operator of EmbeddingCacheLeases: a bug model's config substitutes *)
(* it (`Op <- [EmbeddingCacheLeases] BuggyOp`: reached through the bare    *)
(* INSTANCE, a plain `Op <-` would replace only the root's copy) and       *)
(* checks only the invariant or property it must break; tla/models.json   *)
(* states each defect and its expectation.  The bug models run fifo       *)
(* (models/MCLeaseBugs.tla).                                               *)
(***************************************************************************)
EXTENDS EmbeddingCacheLeases

\* EvictableSetInv: expiry drops the pin in the core only (Unpin), skipping
\* the glue's CacheUnpin, so the policy's release hook never runs.
ExpireSkipsReleaseHook(l) ==
    /\ Due(l)
    /\ Glue!Unpin(lease[l].key)
    /\ lease' = [lease EXCEPT ![l] = Ended(l, "expired")]
    /\ UNCHANGED <<now, plain, settled, policy>>

\* LeasePinsInv: release() of a lease the cache has already expired unpins
\* its entry again (the lease object does not know it expired).
ReleaseAfterExpiryUnpins(l) ==
    /\ Called
    /\ lease[l].state \in {"held", "expired"}
    /\ Glue!CacheUnpin(lease[l].key)
    /\ lease' = [lease EXCEPT ![l] = Ended(l, "released")]
    /\ UNCHANGED plain

\* ExpireOnlyDueProp: expiry compares now >= deadline, so a lease is
\* expired at its deadline, not after it.
ExpireAtDeadline(l) ==
    /\ Held(l)
    /\ now >= lease[l].deadline
    /\ Glue!CacheUnpin(lease[l].key)
    /\ lease' = [lease EXCEPT ![l] = Ended(l, "expired")]
    /\ UNCHANGED <<now, plain, settled>>

\* LeaseDeadlineInv: mark_ready forgets the lazy expiry at its start.
MarkReadySkipsExpiry(k) ==
    /\ settled' = TRUE
    /\ UNCHANGED now
    /\ Glue!CacheMarkReady(k)
    /\ UNCHANGED <<lease, plain>>
=============================================================================
