---------------------- MODULE EmbeddingCacheS3FifoCheck ----------------------
(***************************************************************************)
(* The s3fifo policy with a ghost set `reused`, to state its order        *)
(* (EvictProbationFirstProp) from the cache's events rather than from its *)
(* queues: reused holds the live keys used (PinStep) since they were      *)
(* admitted, computed from the core state only.                           *)
(*                                                                         *)
(* A live key is on probation if it was not used since admission and was  *)
(* admitted into S (home[k] = "S": not remembered by the ghost queue).    *)
(* S3-FIFO's rule "quick demotion": a key on probation is evicted before  *)
(* anything that earned its place, unless S is below its target size.    *)
(* As a property of an alloc step: if some victim was not on probation,   *)
(* the members of E on probation that stay hold fewer than SmallTarget    *)
(* blocks.  (A victim not on probation can only come from M, which is     *)
(* taken only while S holds fewer than SmallTarget blocks; every key on   *)
(* probation is in S and stays there until evicted.)                      *)
(***************************************************************************)
EXTENDS EmbeddingCacheS3Fifo   \* (EmbeddingCacheReductions comes with the glue)

VARIABLE
    reused      \* ghost: the live keys used since they were admitted

checkVars == <<fullVars, reused>>

\* The ghost of an inductive model's initial states (EmbeddingCacheInductive):
\* one value.  Enough: no invariant reads it, and no step's change of the
\* other variables depends on it (GhostStep only writes it).
GhostStates == reused = {}

GhostInit == reused = {}

\* A key is used in a step when it is ready and its pin count goes up.
GhostStep ==
    reused' = {k \in DOMAIN entries' :
                  /\ k \in Live
                  /\ \/ k \in reused
                     \/ entries[k].pins >= 0 /\ entries'[k].pins > entries[k].pins}

CheckSpec == CacheInit /\ GhostInit /\ [][CacheNext /\ GhostStep]_checkVars

OnProbation(k) == k \notin reused /\ k \in DOMAIN home /\ home[k] = "S"

EvictProbationFirstProp ==
    [][(lastOp'.op = "Alloc" /\ \E v \in Evicted : ~OnProbation(v)) =>
          SetBlocks({w \in Evictable \ Evicted : OnProbation(w)}) < SmallTarget
      ]_checkVars

-----------------------------------------------------------------------------
(* Views.  All values are bounded: freq by FreqCap, the ghost by the keys. *)

WellFormed ==
    /\ CoreWellFormed
    /\ PolicyTypeOK
    /\ EvictableSetInv
    /\ reused \subseteq Live

\* What a live key carries besides its place in a queue.
KeyInfo(k) == <<Size(k), entries[k].pins, home[k],
                IF k \in DOMAIN freq THEN freq[k] ELSE -1, k \in reused>>

\* Without lastOp (bug and refinement models).
S3FifoView == <<cacheVars, policy, reused>>

\* Canonical under key and block renaming when well formed: each queue as
\* the KeyInfo per position, the ghost as sizes, the held entries as a bag.
QuotientView ==
    IF WellFormed
       THEN <<"quotient",
              [i \in DOMAIN small |-> KeyInfo(small[i])],
              [i \in DOMAIN main |-> KeyInfo(main[i])],
              [i \in DOMAIN ghost |-> ghost[i][2]],
              BagOf(Live \ Evictable, KeyInfo),
              FreeCount, evictable>>
       ELSE <<"raw", S3FifoView>>
=============================================================================
