--------------------- MODULE EmbeddingCacheLeaseReplay ---------------------
(***************************************************************************)
(* The replay inputs of the lease layer (the MCReplayLease models): the    *)
(* lease spec's steps, each labelled with the call it is.  No action of    *)
(* EmbeddingCacheLeases records the lease calls (Renew, Tick, Query and    *)
(* Expire leave lastOp alone; Lease, LeaseRelease and Expire go through    *)
(* the glue, which records PinIfReady or Unpin), and TLC's dump labels     *)
(* every step of an instantiated action "UnnamedAction"; so this module    *)
(* pairs each disjunct of LeaseNext with a history variable step: [op,    *)
(* key, n, lease], the action's name (spec/NAMES.md), its key, its n (an   *)
(* alloc's blocks, a lease's or a renewal's seconds) and its lease object. *)
(* The history lives here, not in the spec, so that no proof model (the    *)
(* liveness ones have no view) pays for it.  ReplayLeaseSpec implies       *)
(* LeaseSpec (the replay configs check it as a property), so every        *)
(* replayed step is a step of the spec; its disjuncts are LeaseNext's,     *)
(* one for one.  Not a proof model: cut at ReplayDepth.                    *)
(***************************************************************************)
EXTENDS EmbeddingCacheLeases, TLC

CONSTANT ReplayDepth    \* explore states at most this many steps from Init

VARIABLE step           \* history: the call the last step was; no action reads it

replayVars == <<entries, free, evictable, lastOp, policy, now, lease, plain, settled, step>>

Call(op, k, n, l) == [op |-> op, key |-> k, n |-> n, lease |-> l]

\* Label a step with the call it is.
Labelled(A, op, k, n, l) == A /\ step' = Call(op, k, n, l)

ReplayLeaseInit == LeaseInit /\ step = Call("Init", "none", 0, "none")

ReplayLeaseNext ==
    \/ \E k \in Keys, n \in 0 .. N :
           \/ Labelled(CallAlloc(k, n), "Alloc", k, n, "none")
           \/ Labelled(CallAllocFail(k, n), "AllocFail", k, n, "none")
    \/ \E k \in Keys :
           \/ Labelled(CallMarkReady(k), "MarkReady", k, 0, "none")
           \/ Labelled(CallDiscard(k), "Discard", k, 0, "none")
           \/ Labelled(PlainPin(k), "Pin", k, 0, "none")
           \/ Labelled(PlainPinIfReady(k), "PinIfReady", k, 0, "none")
           \/ Labelled(PlainUnpin(k), "Unpin", k, 0, "none")
    \/ Labelled(Query, "Query", "none", 0, "none")
    \/ \E l \in LeaseIds, k \in Keys, d \in 0 .. MaxDuration :
           Labelled(TakeLease(l, k, d), "Lease", k, d, l)
    \/ \E l \in LeaseIds, d \in 0 .. MaxDuration :
           Labelled(Renew(l, d), "Renew", lease[l].key, d, l)
    \/ \E l \in LeaseIds :
           \/ Labelled(LeaseRelease(l), "LeaseRelease", lease[l].key, 0, l)
           \/ Labelled(Expire(l), "Expire", lease[l].key, 0, l)
    \/ Labelled(Tick, "Tick", "none", 0, "none")

ReplayLeaseSpec == ReplayLeaseInit /\ [][ReplayLeaseNext]_replayVars

\* TLCGet("level") is the length of the path that reached the state.
LeaseDepthConstraint == TLCGet("level") <= ReplayDepth
=============================================================================
