------------------------ MODULE EmbeddingCacheLeases ------------------------
(***************************************************************************)
(* Pin leases over the cache of any policy (issue 15, item 3).  A lease    *)
(* is pin_if_ready with a deadline: on a ready entry it takes one pin      *)
(* through the glue (CachePinIfReady: the policy's hold/hit hooks run) and *)
(* records the deadline now + d; on an absent or not-ready key it changes  *)
(* nothing.  The pin is given back by Release (the lease object's release) *)
(* or, once the lease is due (now > deadline), by the cache itself         *)
(* (Expire, through the glue's CacheUnpin: the policy's release hook runs  *)
(* on the last pin).  Plain pins stay and nest with leased ones; plain     *)
(* unpin releases only a plain pin (on an entry whose pins are all leases  *)
(* Python raises NotPinnedError: misuse, not modelled).                   *)
(*                                                                         *)
(* One module for every policy, as TracePolicy is one trace module: it     *)
(* declares the policy's hooks as constants (the glue's names) and reaches *)
(* the glue through the named instance Glue.  A root extends a policy      *)
(* module (which defines the hooks) and EmbeddingCacheLeaseParams, then    *)
(* writes a bare `INSTANCE EmbeddingCacheLeases`: every hook, constant and *)
(* variable is substituted by the root's own of the same name             *)
(* (generated/MCLeaseFifo.tla, ...). Glue's definitions are the ones the     *)
(* policy module's own bare INSTANCE gives the root, so a config override *)
(* `Op <- [EmbeddingCachePolicy] Bug` reaches both.                        *)
(*                                                                         *)
(* Lazy expiry.  Every public call first expires every due lease, then     *)
(* does its work, under the cache's one lock.  Modelled as: the cache's   *)
(* Expire(l) steps, and every call (Called) enabled only when no lease is *)
(* due; a call sets settled, Tick clears it.  Between the Expire steps of *)
(* one call only Tick can happen (every other call waits for them), which *)
(* is the clock moving during the call, so each behaviour is one of the   *)
(* atomic calls' up to stuttering.  LeaseDeadlineInv then says what the   *)
(* lazy expiry guarantees, and a call that skips it breaks it             *)
(* (EmbeddingCacheLeaseBugs).                                              *)
(*                                                                         *)
(* Time.  now advances by Tick up to MaxTime; at the bound Tick moves      *)
(* every live deadline one earlier instead (the same step up to a shift   *)
(* of the time origin: only now - deadline is ever read, and a deadline   *)
(* already past is kept at now - 1, still due), so time never stops and   *)
(* the state space stays finite.                                          *)
(*                                                                         *)
(* The lease action that spec/NAMES.md calls Release is LeaseRelease here: *)
(* Release is the policy's release hook in every module that sees the     *)
(* glue.  Names follow spec/NAMES.md, section "Leases".                    *)
(***************************************************************************)
EXTENDS EmbeddingCacheLib, EmbeddingCacheParams, EmbeddingCacheLeaseParams

CONSTANTS   \* the policy's hooks (EmbeddingCachePolicy), bound by name by the root
    PInit, Admit(_, _, _), Forget(_, _), Ready(_, _, _), Hit(_, _),
    Hold(_, _), Release(_, _, _), HasVictim(_), EvictOne(_, _),
    ViewState(_)    \* the policy state as views compare it (the policy's)

VARIABLE
    policy      \* the policy's state (the root's policy module's)

ASSUME LeaseBoundsAssumption ==
    /\ MaxTime \in Nat \ {0}
    /\ MaxDuration \in Nat

Glue == INSTANCE EmbeddingCachePolicy

\* Every variable of the lease spec, listed (TLC 2.15 cannot evaluate
\* UNCHANGED of a tuple that reached a module through a bare INSTANCE).
leaseAllVars == <<entries, free, evictable, lastOp, policy, now, lease, plain, settled>>

LeaseStates == {"none", "held", "expired", "released"}

\* A lease slot no object occupies yet.
NoLease == [state |-> "none", key |-> "none", deadline |-> 0]

\* Lease l after it ended (state "expired" or "released"): the object keeps
\* its key (what a release after expiry would unpin); release/renew on it
\* return False.
Ended(l, s) == [state |-> s, key |-> lease[l].key, deadline |-> 0]

Held(l) == lease[l].state = "held"

\* A lease is due (expired, not yet released by the cache) iff now > deadline.
Due(l) == Held(l) /\ now > lease[l].deadline

AnyDue == \E l \in LeaseIds : Due(l)

\* The live leases on key k.
LeasesOn(k) == {l \in LeaseIds : Held(l) /\ lease[l].key = k}

\* The pins entry k holds (0 when absent or not ready).
PinsOf(k) == IF k \in Glue!Live THEN Max(entries[k].pins, 0) ELSE 0

LeaseTypeOK ==
    /\ now \in 0 .. MaxTime
    /\ settled \in BOOLEAN
    /\ plain \in [Keys -> 0 .. MaxPins]
    /\ DOMAIN lease = LeaseIds
    /\ \A l \in LeaseIds :
           /\ lease[l].state \in LeaseStates
           /\ lease[l].key \in Keys \cup {"none"}
           /\ lease[l].deadline \in 0 .. MaxTime + MaxDuration

\* The lease layer's variables over every value LeaseTypeOK allows, a lease
\* not held as an unused slot: an inductive model's initial states
\* (core/EmbeddingCacheInductive).  Enough: nothing reads a lease that is not
\* held but Held itself (TakeLease overwrites it; Ended reads a held one's
\* key), so every such lease gives the same successors up to itself.
LeaseLayerStates ==
    /\ now \in 0 .. MaxTime
    /\ settled \in BOOLEAN
    /\ lease \in [LeaseIds -> {NoLease} \cup
                              [state : {"held"}, key : Keys,
                               deadline : 0 .. MaxTime + MaxDuration]]
    /\ plain \in [Keys -> 0 .. MaxPins]

LeaseInit ==
    /\ Glue!CacheInit
    /\ now = 0
    /\ lease = [l \in LeaseIds |-> NoLease]
    /\ plain = [k \in Keys |-> 0]
    /\ settled = FALSE

-----------------------------------------------------------------------------
(* The public calls.  Each first runs the lazy expiry: it is enabled only  *)
(* when no lease is due (the cache's Expire steps ran), and it sets        *)
(* settled.                                                                 *)

Called == ~AnyDue /\ settled' = TRUE /\ UNCHANGED now

\* A call that takes and gives back no pin (alloc, mark_ready, discard, a
\* saver's call in EmbeddingCacheLeaseCallers).
CallOf(A) == Called /\ A /\ UNCHANGED <<lease, plain>>

CallAlloc(k, n)     == CallOf(Glue!CacheAlloc(k, n))
CallAllocFail(k, n) == CallOf(Glue!CacheAllocFail(k, n))
CallMarkReady(k)    == CallOf(Glue!CacheMarkReady(k))
CallDiscard(k)      == CallOf(Glue!CacheDiscard(k))

\* A call that changes nothing but runs the lazy expiry: expire_leases()
\* with nothing left due, get, has_held_entries, a release or renew that
\* returns False.
Query == Called /\ UNCHANGED <<entries, free, evictable, lastOp, policy, lease, plain>>

\* Plain pins: pin, pin_if_ready, unpin, counted in plain.
PlainPin(k) ==
    /\ Called
    /\ Glue!CachePin(k)
    /\ plain' = [plain EXCEPT ![k] = @ + 1]
    /\ UNCHANGED lease

PlainPinIfReady(k) ==
    /\ Called
    /\ Glue!CachePinIfReady(k)
    /\ plain' = IF Glue!PinIfReadyHits(k) THEN [plain EXCEPT ![k] = @ + 1] ELSE plain
    /\ UNCHANGED lease

\* unpin releases a plain pin only.
PlainUnpin(k) ==
    /\ Called
    /\ plain[k] > 0
    /\ Glue!CacheUnpin(k)
    /\ plain' = [plain EXCEPT ![k] = @ - 1]
    /\ UNCHANGED lease

-----------------------------------------------------------------------------
(* The lease actions.                                                      *)

\* cache.lease(k, d) returning the lease object l: pin_if_ready's three
\* outcomes; only a hit records a lease (the others hold nothing).
TakeLease(l, k, d) ==
    /\ Called
    /\ ~Held(l)
    /\ d \in 0 .. MaxDuration
    /\ Glue!CachePinIfReady(k)
    /\ lease' = IF Glue!PinIfReadyHits(k)
                   THEN [lease EXCEPT ![l] = [state |-> "held", key |-> k, deadline |-> now + d]]
                   ELSE lease
    /\ UNCHANGED plain

Lease(k, d) == \E l \in LeaseIds : TakeLease(l, k, d)

\* lease.renew(d) on a held lease: new deadline now + d.
Renew(l, d) ==
    /\ Called
    /\ Held(l)
    /\ d \in 0 .. MaxDuration
    /\ lease' = [lease EXCEPT ![l].deadline = now + d]
    /\ UNCHANGED <<entries, free, evictable, lastOp, policy, plain>>

\* lease.release() on a held lease: the pin goes back through the glue.
LeaseRelease(l) ==
    /\ Called
    /\ Held(l)
    /\ Glue!CacheUnpin(lease[l].key)
    /\ lease' = [lease EXCEPT ![l] = Ended(l, "released")]
    /\ UNCHANGED plain

\* The cache releases a due lease (lazily, inside a call, or in
\* expire_leases()): through the glue's unpin.
Expire(l) ==
    /\ Due(l)
    /\ Glue!CacheUnpin(lease[l].key)
    /\ lease' = [lease EXCEPT ![l] = Ended(l, "expired")]
    /\ UNCHANGED <<now, plain, settled>>

\* The clock advances (bounded; at the bound the time origin shifts).
Tick ==
    /\ settled' = FALSE
    /\ IF now < MaxTime
          THEN now' = now + 1 /\ UNCHANGED lease
          ELSE /\ UNCHANGED now
               /\ lease' = [l \in LeaseIds |->
                              IF Held(l)
                                 THEN [lease[l] EXCEPT !.deadline = Max(@ - 1, now - 1)]
                                 ELSE lease[l]]
    /\ UNCHANGED <<entries, free, evictable, lastOp, policy, plain>>

LeaseNext ==
    \/ \E k \in Keys, n \in 0 .. N : CallAlloc(k, n) \/ CallAllocFail(k, n)
    \/ \E k \in Keys : CallMarkReady(k) \/ CallDiscard(k)
    \/ \E k \in Keys : PlainPin(k) \/ PlainPinIfReady(k) \/ PlainUnpin(k)
    \/ Query
    \/ \E k \in Keys, d \in 0 .. MaxDuration : Lease(k, d)
    \/ \E l \in LeaseIds, d \in 0 .. MaxDuration : Renew(l, d)
    \/ \E l \in LeaseIds : LeaseRelease(l) \/ Expire(l)
    \/ Tick

LeaseSpec == LeaseInit /\ [][LeaseNext]_leaseAllVars

\* The clock and the cache are fair; readers are not (they may never call
\* release).
LeaseFairness == WF_leaseAllVars(Tick) /\ \A l \in LeaseIds : WF_leaseAllVars(Expire(l))

-----------------------------------------------------------------------------
(* Views (safety models only; liveness models use none).                   *)

\* The state without lastOp (no action reads it; README.md, Reductions).
LeaseHistoryView == <<entries, free, evictable, policy, now, lease, plain, settled>>

\* What the future of lease l depends on: while held, its key and its time
\* left (deadline - now; a deadline already past counts as now - 1, as Tick
\* keeps it); an ended lease is as good as an unused slot (no action of
\* LeaseSpec reads an ended lease's key or how it ended: TakeLease needs
\* only ~Held, Renew and LeaseRelease need Held).
LeaseShape(l) ==
    IF Held(l) THEN <<lease[l].key, Max(lease[l].deadline - now, -1)>> ELSE <<>>

\* The state without lastOp, the clock only relative to now, the lease
\* objects as a bag of their shapes.  Sound for safety: no action reads
\* lastOp; actions read the clock only as deadline - now (Due) and write
\* now + d, and Tick lowers every time left by one either way (advancing
\* now, or shifting the deadlines at the bound), so states with one view
\* have the same successors' views; no action distinguishes two lease
\* objects; every checked invariant and property is invariant under these
\* maps.  Not for the bug models, whose defects may read an ended lease.
LeaseViewOf(p) == <<entries, free, evictable, p, plain, settled,
                     Glue!BagOf(LeaseIds, LeaseShape)>>

\* The view: the policy's state as its ViewState hook gives it (itself, or
\* a canonical form of a state that is not finite: gdsf's clock).
LeaseView == LeaseViewOf(ViewState(policy))

-----------------------------------------------------------------------------
(* Properties.                                                             *)

\* Each entry's pin count is its plain pins plus its live leases.
LeasePinsInv == \A k \in Keys : PinsOf(k) = plain[k] + Cardinality(LeasesOn(k))

\* Once a call has run (since the last Tick), no live lease is past its
\* deadline.
LeaseDeadlineInv == settled => \A l \in LeaseIds : Held(l) => lease[l].deadline >= now

\* The cache expires only due leases.
ExpireOnlyDueProp ==
    [][\A l \in LeaseIds :
          Held(l) /\ lease'[l].state = "expired" => now > lease[l].deadline]_lease

\* Every leased pin is eventually released (by its reader or by expiry),
\* unless its reader renews it forever (a live reader that keeps asking:
\* renew is unbounded, in code and here).
RenewedForever(l) == []<><<\E d \in 0 .. MaxDuration : Renew(l, d)>>_leaseAllVars

LeaseReleasedProp == \A l \in LeaseIds : ~RenewedForever(l) => (Held(l) ~> ~Held(l))
=============================================================================
