---------------------- MODULE EmbeddingCacheLeaseCallers ----------------------
(***************************************************************************)
(* The callers of EmbeddingCacheCallers (fifo) with readers that hold pins *)
(* through leases only: reader r takes lease object r (cache.lease), may  *)
(* renew it and may release it, and has NO fairness (it may die holding   *)
(* it).  Every saver's cache call runs the lazy expiry first (CallOf).    *)
(* Fairness: the savers' (as in EmbeddingCacheCallers, on the calls they  *)
(* make here), the clock's and the cache's expiry, none on readers.       *)
(***************************************************************************)
EXTENDS EmbeddingCacheCallers, EmbeddingCacheLeaseParams

INSTANCE EmbeddingCacheLeases

ASSUME ReaderLeasesAssumption == LeaseIds = Readers

\* Every variable, listed (UNCHANGED of an instantiated tuple: see above).
leaseCallerVars ==
    <<entries, free, evictable, lastOp, policy, saver, holding, now, lease, plain, settled>>

LeaseCallersInit == CallersInit /\ LeaseInit

\* Starting a save is no cache call.
LeaseSaverStart(k) == SaverStart(k) /\ UNCHANGED <<now, lease, plain, settled>>

ReaderLease(r, k, d) == TakeLease(r, k, d) /\ UNCHANGED <<saver, holding>>
ReaderRenew(r, d)    == Renew(r, d) /\ UNCHANGED <<saver, holding>>
ReaderRelease(r)     == LeaseRelease(r) /\ UNCHANGED <<saver, holding>>
CacheExpire(l)       == Expire(l) /\ UNCHANGED <<saver, holding>>
ClockTick            == Tick /\ UNCHANGED <<saver, holding>>

\* A reader takes or renews a lease.
ReaderLeases ==
    \/ \E r \in Readers, k \in Keys, d \in 0 .. MaxDuration : ReaderLease(r, k, d)
    \/ \E r \in Readers, d \in 0 .. MaxDuration : ReaderRenew(r, d)

LeaseCallersNext ==
    \/ \E k \in Keys : LeaseSaverStart(k)
    \/ \E k \in Keys : CallOf(SaverAlloc(k)) \/ CallOf(SaverAllocFail(k))
    \/ \E k \in Keys : CallOf(SaverMarkReady(k)) \/ CallOf(SaverDiscard(k))
    \/ ReaderLeases
    \/ \E r \in Readers : ReaderRelease(r)
    \/ \E l \in LeaseIds : CacheExpire(l)
    \/ ClockTick

LeaseCallersSafety == LeaseCallersInit /\ [][LeaseCallersNext]_leaseCallerVars

\* The savers' fairness of EmbeddingCacheCallers, on their calls as made here:
\* the successful alloc and the finish of a write (a failed alloc changes
\* nothing, so its retry needs no fairness of its own).  Strong, where
\* EmbeddingCacheCallers has weak for the finish: a call here waits while a
\* lease is due (the Expire steps that are the start of the code's atomic
\* call), so it is disabled at moments even while the code's call is
\* continuously possible; weak fairness of that call is strong fairness of
\* the guarded step (the cache's fair expiry re-enables it).
LeaseSaverFairness ==
    \A k \in Keys :
        /\ SF_leaseCallerVars(CallOf(SaverAlloc(k)))
        /\ SF_leaseCallerVars(CallOf(SaverMarkReady(k)) \/ CallOf(SaverDiscard(k)))

\* The clock advances and the cache expires due leases.
CacheClockFairness ==
    /\ WF_leaseCallerVars(ClockTick)
    /\ \A l \in LeaseIds : WF_leaseCallerVars(CacheExpire(l))

LeaseCallersSpec == LeaseCallersSafety /\ LeaseSaverFairness /\ CacheClockFairness

\* Without the cache's expiry (only the clock is fair).
NoExpiryFairnessSpec ==
    LeaseCallersSafety /\ LeaseSaverFairness /\ WF_leaseCallerVars(ClockTick)

\* The condition under which, with lease readers, a retried alloc must
\* succeed: the readers eventually stop taking and renewing leases (they
\* may die holding them) and no save is in flight infinitely often.  With
\* plain pins this is not enough: a dead reader's pin is never released.
LeaseAllocCondition ==
    /\ <>[][~ReaderLeases]_leaseCallerVars
    /\ []<>(\A k \in Live : entries[k].pins # NotReady)
=============================================================================
