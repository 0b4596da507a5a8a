----------------------- MODULE EmbeddingCacheNixlRead -----------------------
(***************************************************************************)
(* vLLM 0.33's NIXL consumer read over the cache (fifo), at the counts   *)
(* level: ECCPUScheduler (scheduler/__init__.py) _admit_item, _start_xfer, *)
(* _poll_step, _process_session_results and _on_peer_down, over          *)
(* ConsumerSession and ConsumerXfer (session.py).  spec/PROTOCOLS.md      *)
(* section 6 states it; the names are spec/NAMES.md's.                    *)
(*                                                                         *)
(* An item announced by a remote producer and absent here is read into   *)
(* this cache: _start_xfer allocs a not-ready entry and sends the         *)
(* XferReq; the producer's XferAck starts the NIXL READ.  Each poll of    *)
(* the session (_poll_step) observes the xfers and _process_session_     *)
(* results acts on what it found: completed, mark_ready; tombstoned (a   *)
(* NACK, a failed READ) or retryable (NACK_NOT_READY, the ack timeout),  *)
(* discard; quarantined (the READ's deadline passed, the DMA may still   *)
(* write), nothing: the entry stays not-ready until the xfer settles    *)
(* (the DMA ended, or the quarantine's deadline passed), then discard.   *)
(* A peer that goes down ends its reads through the same results         *)
(* (_on_peer_down: a read waiting for its ack is retryable, a READ in    *)
(* flight is quarantined) and then close()s the session.                 *)
(*                                                                         *)
(* Fixes: the code's fixes of the two places where vLLM 0.33 loses a     *)
(* not-ready entry (vLLM 0.33 has neither: Fixes = {}):                   *)
(*   "startError": _start_xfer raises after its alloc and before its try  *)
(*     (int(info["peer_port"]), transport.connect, the ConsumerSession    *)
(*     constructor); vLLM leaves the entry not-ready with no read, the    *)
(*     fix discards it (as the try does when session.start_xfer raises);  *)
(*   "peerDown": close() drops the session's quarantined xfers, so the    *)
(*     reads a peer down quarantined never settle; the fix keeps them     *)
(*     quarantined, their entries held, until they settle (Settle: at    *)
(*     the latest at a deadline; the plugin: PEER_DOWN_HOLD_S, then      *)
(*     discard, spec/PROTOCOLS.md section 6.1).                           *)
(*                                                                         *)
(* One producer peer; nothing else writes this cache (a consumer-only    *)
(* instance): the reads' allocs evict the ready entries earlier reads    *)
(* made.  Each poll is atomic in vLLM (one _poll_step); the model splits *)
(* it per item, which only adds interleavings.                           *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifo   \* the consumer's cache, fifo (vLLM's policy)

CONSTANTS
    Need,    \* Need[k]: the blocks of item k's encoding (its announced size)
    Fixes    \* the fixes the code has: a subset of Fix

Fix == {"startError", "peerDown"}

ASSUME NixlReadAssumption ==
    /\ Need \in [Keys -> 1 .. N]
    /\ Fixes \subseteq Fix

\* read[k]: "none" (no read of k), "alloced" (_start_xfer allocated its entry,
\* the XferReq not yet sent), "waiting" (WAITING_ACK), "reading" (the READ in
\* flight), "quarantined" (the DMA may still write its blocks).
ReadState == {"none", "alloced", "waiting", "reading", "quarantined"}

VARIABLES
    read,   \* read[k]: the state of the read of item k
    peer    \* "up", or "down" while _on_peer_down ends the dead peer's reads

readVars == <<entries, free, evictable, lastOp, policy, read, peer>>

NixlReadTypeOK ==
    /\ TypeOK
    /\ PolicyTypeOK
    /\ read \in [Keys -> ReadState]
    /\ peer \in {"up", "down"}

\* Every read in progress holds its item's entry, not-ready.
ReadEntryInv ==
    \A k \in Keys : read[k] # "none" => k \in Live /\ entries[k].pins = NotReady

NixlReadInit ==
    /\ CacheInit
    /\ read = [k \in Keys |-> "none"]
    /\ peer = "up"

-----------------------------------------------------------------------------
(* _admit_item and _start_xfer, called by the scheduler for a request     *)
(* that needs item k (no fairness: requests come or not).                 *)

\* Item k is absent (get is None, no read in flight): _start_xfer allocs a
\* not-ready entry for it; None defers the request (admission retries).
ReadAlloc(k) ==
    /\ peer = "up"
    /\ read[k] = "none"
    /\ k \notin Live
    /\ \/ CacheAlloc(k, Need[k]) /\ read' = [read EXCEPT ![k] = "alloced"]
       \/ CacheAllocFail(k, Need[k]) /\ UNCHANGED read
    /\ UNCHANGED peer

\* The rest of _start_xfer: session.start_xfer sends the XferReq.
ReadSend(k) ==
    /\ read[k] = "alloced"
    /\ read' = [read EXCEPT ![k] = "waiting"]
    /\ UNCHANGED <<entries, free, evictable, lastOp, policy, peer>>

\* _start_xfer raises after its alloc.  Inside its try (session.start_xfer
\* raised) it discards the entry; before the try, vLLM 0.33 leaves the
\* entry not-ready with no read ("startError" \notin Fixes).
ReadStartFails(k) ==
    /\ read[k] = "alloced"
    /\ read' = [read EXCEPT ![k] = "none"]
    /\ \/ CacheDiscard(k)
       \/ /\ "startError" \notin Fixes
          /\ UNCHANGED <<entries, free, evictable, lastOp, policy>>
    /\ UNCHANGED peer

-----------------------------------------------------------------------------
(* A poll of the session observes an xfer's next state, and               *)
(* _process_session_results acts on it.                                   *)

\* An OK XferAck: the READ is posted.
AckOk(k) ==
    /\ peer = "up"
    /\ read[k] = "waiting"
    /\ read' = [read EXCEPT ![k] = "reading"]
    /\ UNCHANGED <<entries, free, evictable, lastOp, policy, peer>>

\* A NACK (retryable or tombstoned) or the ack's deadline: discard.
AckRefused(k) ==
    /\ peer = "up"
    /\ read[k] = "waiting"
    /\ CacheDiscard(k)
    /\ read' = [read EXCEPT ![k] = "none"]
    /\ UNCHANGED peer

\* The READ completed (completed): mark_ready.
ReadDone(k) ==
    /\ peer = "up"
    /\ read[k] = "reading"
    /\ CacheMarkReady(k)
    /\ read' = [read EXCEPT ![k] = "none"]
    /\ UNCHANGED peer

\* The READ failed (tombstoned: an unexpected NIXL state): discard.
ReadFailed(k) ==
    /\ peer = "up"
    /\ read[k] = "reading"
    /\ CacheDiscard(k)
    /\ read' = [read EXCEPT ![k] = "none"]
    /\ UNCHANGED peer

\* The READ's deadline passed with the DMA still running (quarantined): the
\* entry stays not-ready.
ReadTimeout(k) ==
    /\ peer = "up"
    /\ read[k] = "reading"
    /\ read' = [read EXCEPT ![k] = "quarantined"]
    /\ UNCHANGED <<entries, free, evictable, lastOp, policy, peer>>

\* The quarantined xfer settled (settled: the DMA ended, or the quarantine's
\* deadline passed and its handle was released): discard.
Settle(k) ==
    /\ peer = "up"
    /\ read[k] = "quarantined"
    /\ CacheDiscard(k)
    /\ read' = [read EXCEPT ![k] = "none"]
    /\ UNCHANGED peer

\* Any observation of item k's xfer at a poll.
PollRead(k) ==
    \/ AckOk(k) \/ AckRefused(k)
    \/ ReadDone(k) \/ ReadFailed(k) \/ ReadTimeout(k)
    \/ Settle(k)

-----------------------------------------------------------------------------
(* The peer goes down: _poll_step's poll_dead, then _on_peer_down.        *)

\* The reads _on_peer_down ends (vLLM 0.33's close() also drops the
\* quarantined ones; with the fix they stay quarantined until they settle).
Ending == IF "peerDown" \in Fixes THEN {"waiting", "reading"}
                                  ELSE {"waiting", "reading", "quarantined"}

\* The peer's connection drops (no call is inside _start_xfer).
PeerDown ==
    /\ peer = "up"
    /\ \A k \in Keys : read[k] # "alloced"
    /\ \E k \in Keys : read[k] \in Ending
    /\ peer' = "down"
    /\ UNCHANGED <<entries, free, evictable, lastOp, policy, read>>

\* _on_peer_down ends k's read: waiting for its ack, retryable (discard); a
\* READ in flight, quarantined (the entry kept).  vLLM 0.33's close() then
\* drops every quarantined xfer of the session: nothing will settle it.
PeerDownEnd(k) ==
    /\ peer = "down"
    /\ read[k] \in Ending
    /\ IF read[k] = "waiting"
          THEN /\ CacheDiscard(k)
               /\ read' = [read EXCEPT ![k] = "none"]
          ELSE /\ read' = [read EXCEPT ![k] = IF "peerDown" \in Fixes
                                                THEN "quarantined" ELSE "none"]
               /\ UNCHANGED <<entries, free, evictable, lastOp, policy>>
    /\ UNCHANGED peer

\* _on_peer_down is over: the next _start_xfer connects a new session.
PeerDownDone ==
    /\ peer = "down"
    /\ \A k \in Keys : read[k] \notin Ending
    /\ peer' = "up"
    /\ UNCHANGED <<entries, free, evictable, lastOp, policy, read>>

NixlReadNext ==
    \/ \E k \in Keys : ReadAlloc(k) \/ ReadSend(k) \/ ReadStartFails(k)
    \/ \E k \in Keys : PollRead(k)
    \/ PeerDown
    \/ \E k \in Keys : PeerDownEnd(k)
    \/ PeerDownDone

-----------------------------------------------------------------------------
(* Fairness: on finishing work only; none on a request coming, a peer     *)
(* going down, or the DMA ending.                                         *)

\* A started call runs to its end: _start_xfer after its alloc, and
\* _on_peer_down.
ReadCallFairness ==
    /\ \A k \in Keys : WF_readVars(ReadSend(k) \/ ReadStartFails(k))
    /\ \A k \in Keys : WF_readVars(PeerDownEnd(k))
    /\ WF_readVars(PeerDownDone)

\* The session is polled again and again and time advances, so each xfer's
\* next state is observed: at the latest its deadline passes (the ack's, the
\* READ's 20 s, the quarantine's 60 s), so no xfer waits for the DMA to end.
\* vLLM 0.33 polls only from ensure_cache_available, for a request with
\* multimodal items being scheduled.  Strong: a peer going down disables
\* the polls for a moment.
ConsumerPollFairness == \A k \in Keys : SF_readVars(PollRead(k))

NixlReadSafety == NixlReadInit /\ [][NixlReadNext]_readVars

NixlReadSpec == NixlReadSafety /\ ReadCallFairness /\ ConsumerPollFairness

\* (The obligation checked is the core's SaveResolvesProp: every not-ready
\* entry is eventually marked ready or discarded.)
=============================================================================
