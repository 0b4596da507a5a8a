--------------------- MODULE EmbeddingCacheLeaseTrace ----------------------
(***************************************************************************)
(* Trace validation with leases: does a trace recorded from the Python     *)
(* cache, lease calls included, describe a behaviour of the lease spec     *)
(* (tla/leases/EmbeddingCacheLeases.tla) over the policy TracePolicy       *)
(* selects?  EmbeddingCacheTrace's way (one path per trace of the batch,  *)
(* ending at the first step the spec cannot take), with its state match    *)
(* (PostMatches) and its                                                   *)
(* refusals (ExpectedError), and the lease spec's actions for each step:   *)
(*                                                                         *)
(*   tick          Tick (the clock the cache read moved one on; the trace  *)
(*                 tooling writes a move of d as d ticks, and MaxTime is    *)
(*                 the batch's last clock, so the origin never shifts)      *)
(*   expire        Expire(l): the cache released lease l, due             *)
(*   lease         TakeLease: a hit records lease t.lease for t.n seconds  *)
(*   renew_lease   Renew (True) or a Query on a lease that holds nothing   *)
(*   release_lease LeaseRelease (True) or such a Query (False)             *)
(*   the core's    their Call* / Plain* actions, which need no lease due   *)
(*                                                                         *)
(* The lease ids are the code's; a batch's LeaseIds are its granted ids    *)
(* and one spare slot (for a lease call that grants nothing).  An expire   *)
(* step the code shows no state after (all but the last of one call's) has *)
(* known = FALSE and is matched by its action alone.                       *)
(***************************************************************************)
EXTENDS EmbeddingCacheTrace, EmbeddingCacheLeaseParams

L == INSTANCE EmbeddingCacheLeases WITH Level <- "blocks"

leaseTraceVars ==
    <<entries, free, evictable, lastOp, policy, door, now, lease, plain, settled, i, tr>>

\* Does the spec's successor match the leases the code recorded?
LeasePostMatches(p) ==
    /\ now' = p.now
    /\ \A l \in LeaseIds : (lease'[l].state = "held") = (l \in DOMAIN p.leases)
    /\ \A l \in DOMAIN p.leases :
           /\ l \in LeaseIds
           /\ lease'[l].key = p.leases[l].key
           /\ lease'[l].deadline = p.leases[l].deadline
    /\ \A k \in Keys : plain'[k] = IF k \in DOMAIN p.plain THEN p.plain[k] ELSE 0

\* unpin of an entry whose pins are all leases is refused (NotPinnedError).
LeaseExpectedError(t) ==
    IF /\ t.op = "unpin" /\ t.key \in Live
       /\ entries[t.key].pins > 0 /\ plain[t.key] = 0
    THEN "NotPinnedError"
    ELSE ExpectedError(t)

\* A lease call that granted nothing: pin_if_ready's miss, no lease recorded.
LeaseMiss(t) ==
    /\ \E l \in LeaseIds : L!TakeLease(l, t.key, t.n)
    /\ lease' = lease
    /\ t.result = IF t.key \notin Live THEN "none" ELSE "not-ready-lease"

\* A release or renew that returned False: the lease holds nothing.
Refused(t) == L!Query /\ (t.lease \in LeaseIds => ~L!Held(t.lease))

LeaseStepMatches(t) ==
    CASE t.op = "tick"          -> L!Tick
      [] t.op = "expire"        -> L!Expire(t.lease)
      [] t.op = "lease"         -> IF t.result = "lease"
                                      THEN /\ L!TakeLease(t.lease, t.key, t.n)
                                           /\ lease'[t.lease].state = "held"
                                      ELSE LeaseMiss(t)
      [] t.op = "renew_lease"   -> IF t.result = "true" THEN L!Renew(t.lease, t.n)
                                   ELSE Refused(t)
      [] t.op = "release_lease" -> IF t.result = "true" THEN L!LeaseRelease(t.lease)
                                   ELSE Refused(t)
      [] t.result \in {"ok", "entry", "not-ready-entry", "none"} ->
            CASE t.op = "alloc" /\ t.result = "not-ready-entry" ->
                     /\ L!CallAlloc(t.key, t.n)
                     /\ entries'[t.key].blocks = t.blocks
              [] t.op = "alloc" /\ t.result = "none" -> L!CallAllocFail(t.key, t.n)
              [] t.op = "mark_ready"                 -> L!CallMarkReady(t.key)
              [] t.op = "pin"                        -> L!PlainPin(t.key)
              [] t.op = "pin_if_ready" ->
                     /\ L!PlainPinIfReady(t.key)
                     /\ t.result = IF t.key \notin Live THEN "none"
                                   ELSE IF entries[t.key].pins < 0
                                        THEN "not-ready-entry" ELSE "entry"
              [] t.op = "unpin"                      -> L!PlainUnpin(t.key)
              [] t.op = "discard"                    -> L!CallDiscard(t.key)
              [] OTHER                               -> FALSE
      [] OTHER ->   \* the call raised t.result: the spec forbids it; it ran the expiry only
            /\ t.result = LeaseExpectedError(t)
            /\ t.result # "none"
            /\ L!Query

LeaseTraceInit ==
    /\ L!LeaseInit
    /\ door = <<>>   \* no admission filter with leases (Filtered is FALSE)
    /\ tr \in DOMAIN Traces
    /\ i = 0

LeaseTraceNext ==
    \/ /\ i < Len(Trace)
       /\ LET t == Trace[i + 1]
          IN  /\ LeaseStepMatches(t)
              /\ t.known => PostMatches(t.post) /\ LeasePostMatches(t.lpost)
       /\ UNCHANGED door
       /\ i' = i + 1
       /\ UNCHANGED tr
    \/ /\ i = Len(Trace)
       /\ UNCHANGED leaseTraceVars

LeaseTraceSpec == LeaseTraceInit /\ [][LeaseTraceNext]_leaseTraceVars
=============================================================================
