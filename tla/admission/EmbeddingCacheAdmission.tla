---------------------- MODULE EmbeddingCacheAdmission ----------------------
(***************************************************************************)
(* An admission filter over the cache of any policy: the doorkeeper       *)
(* (spec/SPEC.md section 13).  An alloc that would evict (WouldEvict:     *)
(* fewer than n blocks free, enough with the evictable ones; with         *)
(* contiguity, also no free run of n while an entry is evictable:         *)
(* WouldEvictUnder(n, Contiguity), the extra victims count too) is        *)
(* declined, unless its key is at the door: the doorkeeper remembers      *)
(* the last DoorCapacity keys it declined, and lets a remembered key in.  *)
(* So a key is admitted at the cost of an eviction only on its second     *)
(* request in a while; one-time items never push anything out.  A decline *)
(* returns None and changes nothing in the cache (the core's              *)
(* AllocDeclineUnder, through the glue's CacheAllocDeclineUnder: the      *)
(* policy is not told).  Every successful alloc of a key takes it off the *)
(* door; no other call touches the door.                                  *)
(*                                                                        *)
(* One module for every policy, as EmbeddingCacheLeases: the policy's     *)
(* hooks are constants (the glue's names) and the glue is the named       *)
(* instance Glue, both declared in EmbeddingCacheLayer.  A root extends a *)
(* policy module and EmbeddingCacheAdmissionParams, then writes a bare    *)
(* `INSTANCE EmbeddingCacheAdmission` (generated/MCAdmissionFifo.tla, ...).*)
(* With contiguity too: tla/combined/, which reuses AdmitThrough,         *)
(* DeclineAlloc and UntouchedNext.                                        *)
(*                                                                        *)
(* The filter refines the core's FilteredSpec (Spec plus declines), with  *)
(* policy and door hidden (AdmissionRefinesCore).  Names follow           *)
(* spec/NAMES.md, section "Admission".                                    *)
(***************************************************************************)
EXTENDS EmbeddingCacheLayer, EmbeddingCacheAdmissionParams, Sequences
\* EmbeddingCacheLayer declares the policy's hooks, the variable policy and
\* the glue's instance Glue.

ASSUME DoorAssumption == DoorCapacity \in Nat \ {0}

\* Every variable of the admission spec, listed (TLC 2.15 cannot evaluate
\* UNCHANGED of a tuple that reached a module through a bare INSTANCE).
admissionVars == <<entries, free, evictable, lastOp, policy, door>>

-----------------------------------------------------------------------------
(* The doorkeeper's rule.                                                 *)

\* The keys at the door.
AtDoor == Range(door)

\* The door after declining k: k joins as the newest; the oldest leaves
\* when the door is full.
Remember(d, k) == IF Len(d) < DoorCapacity THEN Append(d, k) ELSE Append(Tail(d), k)

\* The alloc of n would evict anything: a needed victim, or (Contiguity >
\* 0) an extra one, because no free run holds n (WouldEvictUnder).
Evicts(n) == Glue!WouldEvictUnder(n, Contiguity)

\* The doorkeeper declines alloc(k, n) iff it would evict and k is not at
\* the door.
Declines(k, n) == Evicts(n) /\ k \notin AtDoor

AdmissionInit == Glue!CacheInit /\ door = <<>>

\* The doorkeeper lets alloc(k, n) through to A, an alloc of k that takes
\* its blocks (the policy's CacheAlloc here, the contiguity loop's in
\* tla/combined/): k leaves the door.
AdmitThrough(k, n, A) ==
    /\ ~Declines(k, n)
    /\ A
    /\ door' = Remove(door, k)

\* alloc(k, n) the doorkeeper lets through: the policy's alloc.
AdmitAlloc(k, n) == AdmitThrough(k, n, Glue!CacheAlloc(k, n))

\* alloc(k, n) the doorkeeper declines: None, nothing changes but the door.
DeclineAlloc(k, n) ==
    /\ Declines(k, n)
    /\ Glue!CacheAllocDeclineUnder(k, n, Contiguity)
    /\ door' = Remember(door, k)

\* Every other call: the glue's, the door untouched.
Untouched(A) == A /\ UNCHANGED door

\* Every call but an alloc the doorkeeper decides (short allocs included).
UntouchedNext ==
    \/ \E k \in Keys, n \in 0 .. N : Untouched(Glue!CacheAllocFail(k, n))
    \/ \E k \in Keys : Untouched(Glue!CacheMarkReady(k))
    \/ \E k \in Keys : Untouched(Glue!CachePin(k))
    \/ \E k \in Keys : Untouched(Glue!CachePinIfReady(k))
    \/ \E k \in Keys : Untouched(Glue!CacheUnpin(k))
    \/ \E k \in Keys : Untouched(Glue!CacheDiscard(k))

AdmissionNext ==
    \/ \E k \in Keys, n \in 0 .. N : AdmitAlloc(k, n) \/ DeclineAlloc(k, n)
    \/ UntouchedNext

AdmissionSpec == AdmissionInit /\ [][AdmissionNext]_admissionVars

\* The state without lastOp (no action reads it; README.md, Reductions),
\* the policy's state as its ViewState hook gives it (itself, or a
\* canonical form of a state that is not finite: gdsf's clock).
AdmissionViewOf(p) == <<entries, free, evictable, p, door>>
AdmissionView == AdmissionViewOf(ViewState(policy))

-----------------------------------------------------------------------------
(* Properties.                                                            *)

\* The door is a sequence of distinct keys, at most DoorCapacity long.
DoorTypeOK ==
    /\ door \in Seq(Keys)
    /\ Len(door) <= DoorCapacity
    /\ \A i, j \in DOMAIN door : i # j => door[i] # door[j]

\* The door over every value DoorTypeOK allows (at most DoorCapacity keys,
\* each once): an inductive model's initial states (core/EmbeddingCacheInductive).
DoorStates == door \in SeqsOf(Keys, DoorCapacity)

\* Every key at the door is absent: it joined when its alloc was declined,
\* and leaves when an alloc of it succeeds.
DoorHoldsAbsentKeysInv == \A k \in AtDoor : k \notin Glue!Live

\* The doorkeeper's rule, step by step: an alloc that would evict is
\* declined iff its key is not at the door; a decline remembers the key, a
\* successful alloc takes it off; nothing else moves the door.
DoorkeeperRuleProp ==
    [][LET op == lastOp'.op
           k  == lastOp'.key
           n  == lastOp'.n
       IN  /\ op \in {"Alloc", "AllocDecline"} =>
                  (op = "AllocDecline" <=> Evicts(n) /\ k \notin AtDoor)
           /\ op = "AllocDecline" => door' = Remember(door, k)
           /\ op = "Alloc" => door' = Remove(door, k)
           /\ op \notin {"Alloc", "AllocDecline"} => door' = door]_admissionVars

\* An alloc is declined only when it would evict, and could: fewer than n
\* blocks are free or, with contiguity, no free run holds n while an entry
\* is evictable; and free + evictable blocks are enough (counted from E
\* itself, not from the counter).  With AllocFailsOnlyWhenShortProp this
\* says exactly when None may be returned.
AllocDeclinesOnlyWhenEvictingProp ==
    [][LET n == lastOp'.n
       IN  lastOp'.op = "AllocDecline" =>
               /\ Glue!FreeCount + Glue!SetBlocks(Glue!Evictable) >= n
               /\ \/ Glue!FreeCount < n
                  \/ Contiguity > 0 /\ Glue!Evictable # {} /\ ~Glue!HasRun(free, n)]_admissionVars

\* The filtered cache does only what the core allows a filtered cache.
AdmissionRefinesCore == Glue!CoreFilteredSpec
-----------------------------------------------------------------------------
THEOREM AdmissionSpec => AllocDeclinesOnlyWhenEvictingProp /\ DoorkeeperRuleProp
=============================================================================
