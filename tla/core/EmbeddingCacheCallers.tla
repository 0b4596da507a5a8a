------------------------ MODULE EmbeddingCacheCallers ------------------------
(***************************************************************************)
(* The callers of the cache, for liveness.  Every key has one saver that, *)
(* when the key is absent, starts a save: it retries alloc(k, Need[k])     *)
(* until it succeeds, then either marks the entry ready or discards it    *)
(* (a failed transfer).  Readers (local loaders with pin, remote readers  *)
(* with pin_if_ready) pin a ready entry, read it, and unpin it; a reader  *)
(* holds at most one pin at a time.  Callers may stop starting new work  *)
(* (no fairness on starting a save or taking a pin), but work in progress *)
(* is finished under the fairness assumptions below.                     *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifo   \* the callers of the fifo policy (the default)

CONSTANTS
    Readers,    \* the reader processes (loaders and remote readers)
    Need        \* Need[k]: the number of blocks a save of key k allocates

ASSUME NeedAssumption    == Need \in [Keys -> 0 .. N]
ASSUME ReadersAssumption == Cardinality(Readers) <= MaxPins

NoKey == "none"            \* holding[r] of a reader that holds no pin

VARIABLES
    saver,      \* saver[k]: "idle", "allocating" (retrying) or "writing"
    holding     \* holding[r]: the key reader r has pinned, or NoKey

callerVars == <<saver, holding>>
\* (Listed, not <<fullVars, ...>>: TLC 2.15 cannot evaluate UNCHANGED of a
\* tuple that reached this module through a bare INSTANCE.)
allVars    == <<entries, free, evictable, lastOp, policy, saver, holding>>

CallersTypeOK ==
    /\ TypeOK
    /\ PolicyTypeOK
    /\ saver \in [Keys -> {"idle", "allocating", "writing"}]
    /\ holding \in [Readers -> Keys \cup {NoKey}]

CallersInit ==
    /\ CacheInit
    /\ saver   = [k \in Keys |-> "idle"]
    /\ holding = [r \in Readers |-> NoKey]

\* A saver starts saving an absent key (the cache missed).
SaverStart(k) ==
    /\ saver[k] = "idle"
    /\ k \notin Live
    /\ saver' = [saver EXCEPT ![k] = "allocating"]
    /\ UNCHANGED <<entries, free, evictable, lastOp, policy, holding>>

\* The saver's alloc succeeds.
SaverAlloc(k) ==
    /\ saver[k] = "allocating"
    /\ CacheAlloc(k, Need[k])
    /\ saver' = [saver EXCEPT ![k] = "writing"]
    /\ UNCHANGED holding

\* The saver's alloc returns None; it stays "allocating" and retries.
SaverAllocFail(k) ==
    /\ saver[k] = "allocating"
    /\ CacheAllocFail(k, Need[k])
    /\ UNCHANGED callerVars

\* The write completed: the saver marks the entry ready.
SaverMarkReady(k) ==
    /\ saver[k] = "writing"
    /\ CacheMarkReady(k)
    /\ saver' = [saver EXCEPT ![k] = "idle"]
    /\ UNCHANGED holding

\* The write failed: the saver discards the not-ready entry.
SaverDiscard(k) ==
    /\ saver[k] = "writing"
    /\ CacheDiscard(k)
    /\ saver' = [saver EXCEPT ![k] = "idle"]
    /\ UNCHANGED holding

\* A local loader pins an entry it knows to be ready.
ReaderPin(r, k) ==
    /\ holding[r] = NoKey
    /\ k \in Live
    /\ entries[k].pins >= 0
    /\ CachePin(k)
    /\ holding' = [holding EXCEPT ![r] = k]
    /\ UNCHANGED saver

\* A remote reader calls pin_if_ready; it holds a pin only on a hit.
ReaderPinIfReady(r, k) ==
    /\ holding[r] = NoKey
    /\ CachePinIfReady(k)
    /\ holding' = [holding EXCEPT ![r] =
                      IF k \in Live /\ entries[k].pins >= 0 THEN k ELSE NoKey]
    /\ UNCHANGED saver

\* A reader finished reading and releases its pin.
ReaderUnpin(r) ==
    /\ holding[r] # NoKey
    /\ CacheUnpin(holding[r])
    /\ holding' = [holding EXCEPT ![r] = NoKey]
    /\ UNCHANGED saver

CallersNext ==
    \/ \E k \in Keys : SaverStart(k) \/ SaverAlloc(k) \/ SaverAllocFail(k)
    \/ \E k \in Keys : SaverMarkReady(k) \/ SaverDiscard(k)
    \/ \E r \in Readers, k \in Keys : ReaderPin(r, k) \/ ReaderPinIfReady(r, k)
    \/ \E r \in Readers : ReaderUnpin(r)

-----------------------------------------------------------------------------
(* Fairness assumptions, one per kind of work in progress.                 *)

\* A saver whose alloc can succeed keeps retrying (weak fairness).
SaverRetryFairness ==
    \A k \in Keys : WF_allVars(SaverAlloc(k) \/ SaverAllocFail(k))

\* A saver that retries forever succeeds if its alloc can succeed
\* infinitely often (strong fairness of the successful alloc).
AllocStrongFairness == \A k \in Keys : SF_allVars(SaverAlloc(k))

\* Only weak fairness of the successful alloc (used to show starvation).
AllocWeakFairness == \A k \in Keys : WF_allVars(SaverAlloc(k))

\* A started write eventually completes or fails.
SaverFinishFairness ==
    \A k \in Keys : WF_allVars(SaverMarkReady(k) \/ SaverDiscard(k))

\* A reader eventually releases the pin it holds.
ReaderFairness == \A r \in Readers : WF_allVars(ReaderUnpin(r))

CallersSafety == CallersInit /\ [][CallersNext]_allVars

\* The callers under all fairness assumptions.
CallersSpec ==
    /\ CallersSafety
    /\ SaverRetryFairness
    /\ AllocStrongFairness
    /\ SaverFinishFairness
    /\ ReaderFairness

-----------------------------------------------------------------------------
(* Liveness properties.                                                    *)

\* (SaveResolvesProp, every not-ready entry eventually ready or discarded,
\* is the core's: a property of the cache's state, checked here under
\* SaverFinishFairness and in tla/protocol/ under its callers' fairness.)

\* Every pin is eventually released (by the reader that took it).
PinReleasedProp ==
    \A r \in Readers : (holding[r] # NoKey) ~> (holding[r] = NoKey)

\* The condition under which a retried alloc must succeed: the cache is
\* infinitely often quiescent (no save in flight and no pin held).  Without
\* it a waiting alloc can starve (MCLivenessStarvation, README.md).
AllocCondition == []<>(~HasHeldEntries)

\* A retried alloc of Need[k] <= N blocks eventually succeeds, provided the
\* cache is quiescent infinitely often.
AllocEventuallySucceedsProp ==
    AllocCondition =>
        \A k \in Keys : (saver[k] = "allocating") ~> (saver[k] = "writing")
=============================================================================
