-------------------- MODULE EmbeddingCacheProducerSession --------------------
(***************************************************************************)
(* vLLM 0.33's producer session over the cache (fifo), at the counts     *)
(* level: ProducerSession (session.py) _grant_or_nack, _drain_notifs,    *)
(* _sweep_timeouts and close(), run by poll_step from                     *)
(* ECCPUScheduler.build_connector_meta.  spec/PROTOCOLS.md section 6      *)
(* states it; the names are spec/NAMES.md's.                              *)
(*                                                                         *)
(* A consumer peer's XferReq for item k is granted if pin_if_ready(k)    *)
(* hits: the grant, keyed by the peer's session and the item, holds that *)
(* pin and a lease of PRODUCER_PIN_LEASE_S (30 s) that the session keeps *)
(* itself (outside the cache).  The pin is released when the peer's NIXL *)
(* completion notification is drained, when the sweep finds the lease   *)
(* expired, when the same peer re-requests a grant it still holds (the   *)
(* old pin is unpinned, the new one kept), or by close().  A missed      *)
(* pin_if_ready is a NACK.  The producer's own saves (alloc, mark_ready  *)
(* on the worker's report) make the entries the peers read.              *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifo   \* the producer's cache, fifo (vLLM's policy)

CONSTANTS
    Need,    \* Need[k]: the blocks of item k's encoder output
    Peers    \* the consumer peers (their session ids)

ASSUME ProducerSessionAssumption ==
    /\ Need \in [Keys -> 1 .. N]
    /\ Peers # {}
    /\ MaxPins >= Cardinality(Peers) + 1   \* a re-request holds two pins a moment

\* grant[p][k]: _active_xfers["p:k"]: "none", "live" (its lease runs),
\* "expired" (past its deadline, not yet swept), "regrant" (inside
\* _grant_or_nack: the new pin taken, the old one not yet unpinned).
GrantState == {"none", "live", "expired", "regrant"}

VARIABLES
    saving,   \* the producer's own saves in flight (entries not yet ready)
    grant,    \* grant[p][k]: peer p's grant on item k
    session   \* "open", "closing" (close() unpinning), "closed"

sessionVars == <<entries, free, evictable, lastOp, policy, saving, grant, session>>

ProducerSessionTypeOK ==
    /\ TypeOK
    /\ PolicyTypeOK
    /\ saving \subseteq Keys
    /\ grant \in [Peers -> [Keys -> GrantState]]
    /\ session \in {"open", "closing", "closed"}

\* The pins peer p's grant on k holds.
GrantPins(p, k) == CASE grant[p][k] = "none"    -> 0
                     [] grant[p][k] = "regrant" -> 2
                     [] OTHER                   -> 1

\* The peers whose grant on k holds a pin, and those holding two.
Holders(k)    == {p \in Peers : GrantPins(p, k) > 0}
Regranting(k) == {p \in Peers : GrantPins(p, k) = 2}

\* An entry's pins are its grants' pins: the session never unpins a pin it
\* did not take, nor loses one; no grant is on an absent or not-ready entry.
GrantPinsInv ==
    \A k \in Keys :
        IF k \in Live /\ entries[k].pins >= 0
           THEN entries[k].pins = Cardinality(Holders(k)) + Cardinality(Regranting(k))
           ELSE Holders(k) = {}

\* No call of the session is half done (_grant_or_nack runs to its end).
Settled == \A p \in Peers, k \in Keys : grant[p][k] # "regrant"

ProducerSessionInit ==
    /\ CacheInit
    /\ saving = {}
    /\ grant = [p \in Peers |-> [k \in Keys |-> "none"]]
    /\ session = "open"

-----------------------------------------------------------------------------
(* The producer's own saves.                                              *)

\* update_state_after_alloc of a computed item: alloc if absent, the save
\* dispatched (a failed alloc saves nothing).
Save(k) ==
    /\ session # "closing" /\ Settled
    /\ k \notin Live
    /\ \/ CacheAlloc(k, Need[k]) /\ saving' = saving \cup {k}
       \/ CacheAllocFail(k, Need[k]) /\ UNCHANGED saving
    /\ UNCHANGED <<grant, session>>

\* The worker reports the save: mark_ready.
SaveDone(k) ==
    /\ session # "closing" /\ Settled
    /\ k \in saving
    /\ CacheMarkReady(k)
    /\ saving' = saving \ {k}
    /\ UNCHANGED <<grant, session>>

-----------------------------------------------------------------------------
(* poll_step: the requests, then the notifications, then the sweep.       *)

\* _grant_or_nack: pin_if_ready(k); a hit is granted with a fresh lease (a
\* grant p already holds on k is re-granted: its old pin is unpinned next);
\* a miss is a NACK.
Request(p, k) ==
    /\ session = "open" /\ Settled
    /\ CachePinIfReady(k)
    /\ IF PinIfReadyHits(k)
          THEN grant' = [grant EXCEPT ![p][k] = IF @ = "none" THEN "live" ELSE "regrant"]
          ELSE UNCHANGED grant
    /\ UNCHANGED <<saving, session>>

\* The re-request of a held grant unpins the old pin before it overwrites
\* the grant.
DropOld(p, k) ==
    /\ grant[p][k] = "regrant"
    /\ CacheUnpin(k)
    /\ grant' = [grant EXCEPT ![p][k] = "live"]
    /\ UNCHANGED <<saving, session>>

\* _drain_notifs: peer p's READ of k completed and its notification pops the
\* grant: unpin.  (Peers may never complete: no fairness.)
Complete(p, k) ==
    /\ session = "open" /\ Settled
    /\ grant[p][k] \in {"live", "expired"}
    /\ CacheUnpin(k)
    /\ grant' = [grant EXCEPT ![p][k] = "none"]
    /\ UNCHANGED <<saving, session>>

\* Time passes the grant's deadline (now > deadline: is_expired()).
Expire(p, k) ==
    /\ grant[p][k] = "live"
    /\ grant' = [grant EXCEPT ![p][k] = "expired"]
    /\ UNCHANGED <<entries, free, evictable, lastOp, policy, saving, session>>

\* _sweep_timeouts: an expired grant is unpinned and dropped.
Sweep(p, k) ==
    /\ session = "open" /\ Settled
    /\ grant[p][k] = "expired"
    /\ CacheUnpin(k)
    /\ grant' = [grant EXCEPT ![p][k] = "none"]
    /\ UNCHANGED <<saving, session>>

-----------------------------------------------------------------------------
(* close() (the scheduler's shutdown): every grant still held is unpinned. *)

Close ==
    /\ session = "open" /\ Settled
    /\ session' = "closing"
    /\ UNCHANGED <<entries, free, evictable, lastOp, policy, saving, grant>>

CloseGrant(p, k) ==
    /\ session = "closing"
    /\ grant[p][k] \in {"live", "expired"}
    /\ CacheUnpin(k)
    /\ grant' = [grant EXCEPT ![p][k] = "none"]
    /\ UNCHANGED <<saving, session>>

CloseDone ==
    /\ session = "closing"
    /\ \A p \in Peers, k \in Keys : grant[p][k] = "none"
    /\ session' = "closed"
    /\ UNCHANGED <<entries, free, evictable, lastOp, policy, saving, grant>>

ProducerSessionNext ==
    \/ \E k \in Keys : Save(k) \/ SaveDone(k)
    \/ \E p \in Peers, k \in Keys :
           \/ Request(p, k) \/ DropOld(p, k) \/ Complete(p, k)
           \/ Expire(p, k) \/ Sweep(p, k) \/ CloseGrant(p, k)
    \/ Close \/ CloseDone

-----------------------------------------------------------------------------
(* Fairness: on finishing work only; none on requests, on a peer's READ   *)
(* completing, on close().                                                 *)

\* A started call runs to its end: _grant_or_nack's unpin of the old pin,
\* close().
SessionCallFairness ==
    /\ \A p \in Peers, k \in Keys : WF_sessionVars(DropOld(p, k))
    /\ \A p \in Peers, k \in Keys : WF_sessionVars(CloseGrant(p, k))
    /\ WF_sessionVars(CloseDone)

\* A save the worker makes is reported (strong: a re-request disables it a
\* moment).
SaveReportFairness == \A k \in Keys : SF_sessionVars(SaveDone(k))

\* poll_step runs again and again, so an expired grant is swept: vLLM 0.33
\* calls it from build_connector_meta, every engine step, and keeps the
\* engine stepping (has_pending_push_work() is true whenever NIXL is on).
ProducerPollFairness == \A p \in Peers, k \in Keys : SF_sessionVars(Sweep(p, k))

\* Time advances, so a grant's lease (30 s) expires.
LeaseClockFairness == \A p \in Peers, k \in Keys : WF_sessionVars(Expire(p, k))

ProducerSessionSafety == ProducerSessionInit /\ [][ProducerSessionNext]_sessionVars

ProducerSessionSpec ==
    /\ ProducerSessionSafety
    /\ SessionCallFairness
    /\ SaveReportFairness
    /\ ProducerPollFairness
    /\ LeaseClockFairness

-----------------------------------------------------------------------------
(* The obligations: GrantPinsInv (above), SaveResolvesProp (the core's),  *)
(* and every grant's pin released.                                        *)

\* Every pin the session takes is eventually released: a grant ends (the
\* peer's completion, the sweep, close()) or is re-granted (its old pin is
\* unpinned).
PinReleasedProp ==
    \A p \in Peers, k \in Keys :
        (grant[p][k] \in {"live", "expired"}) ~> (grant[p][k] \in {"none", "regrant"})
=============================================================================
