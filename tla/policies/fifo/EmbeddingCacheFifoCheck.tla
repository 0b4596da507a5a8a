----------------------- MODULE EmbeddingCacheFifoCheck -----------------------
(***************************************************************************)
(* The fifo policy with a ghost logical clock, to state its order          *)
(* independently of its queue: joinStamp[k] is the clock value when k     *)
(* last joined E (mark_ready, or the unpin to 0), computed from the core  *)
(* state only.  EvictOldestFirstProp: the victims of an alloc are the     *)
(* members of E with the smallest stamps.  A queue that inserts at the    *)
(* head (MCBugFifoHeadInsert) keeps every shared invariant and property   *)
(* and EvictableSetInv, and violates this one.                            *)
(*                                                                         *)
(* The clock grows without bound; the views normalise stamps to ranks     *)
(* (README.md, "Reductions").                                              *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifo   \* (EmbeddingCacheReductions comes with the glue)

VARIABLES
    joinStamp,  \* ghost: E -> the clock value when the key last joined E
    joinClock   \* ghost: the logical clock (number of joins so far)

ghostVars == <<joinStamp, joinClock>>
checkVars == <<fullVars, ghostVars>>

GhostInit == joinStamp = [k \in {} |-> 0] /\ joinClock = 0

\* Stamp the key that joined E in this step (at most one does).
GhostStep ==
    LET joined == Evictable' \ Evictable
    IN  /\ joinStamp' = [k \in Evictable' |->
                            IF k \in joined THEN joinClock ELSE joinStamp[k]]
        /\ joinClock' = joinClock + Cardinality(joined)

\* (Each check module states this line for its own ghosts: TLC 2.15 does not
\* accept an operator applied to arguments as the SPECIFICATION.)
CheckSpec == CacheInit /\ GhostInit /\ [][CacheNext /\ GhostStep]_checkVars

GhostTypeOK == DOMAIN joinStamp = Evictable /\ joinClock \in Nat

\* The stamps rise along the queue, and the clock is past every stamp: the
\* lemma that makes EvictOldestFirstProp hold on a step from any state of the
\* invariants (spec/SPEC.md section 15), the queue's head being the oldest.
QueueStampOrderInv ==
    /\ GhostTypeOK
    /\ \A i, j \in DOMAIN queue : i < j => joinStamp[queue[i]] < joinStamp[queue[j]]
    /\ \A k \in DOMAIN joinStamp : joinStamp[k] < joinClock

\* The ghosts of an inductive model's initial states (EmbeddingCacheInductive):
\* every stamp below |Keys| and the clock at most |Keys|.  The bound: only the
\* stamps' order and the clock's place among them are ever read (a join stamps
\* the clock, the property compares stamps), so ranks stand for any stamps,
\* as the views' StampRanks do.
GhostStates ==
    /\ joinStamp \in [Evictable -> 0 .. Cardinality(Keys) - 1]
    /\ joinClock \in 0 .. Cardinality(Keys)

\* The victims of an alloc are members of E with smaller stamps than every
\* member of E that stays.
EvictOldestFirstProp ==
    [][lastOp'.op = "Alloc" =>
          /\ Evicted \subseteq Evictable
          /\ \A v \in Evicted, w \in Evictable \ Evicted :
                 joinStamp[v] < joinStamp[w]]_checkVars

-----------------------------------------------------------------------------
(* Views.                                                                  *)

\* The rank of a stamped key among the stamped keys (0 = oldest).
Rank(k) == Cardinality({j \in DOMAIN joinStamp : joinStamp[j] < joinStamp[k]})
StampRanks == [k \in DOMAIN joinStamp |-> Rank(k)]

\* Drops lastOp and the clock, keeps the stamps' order (bug models).
GhostView == <<cacheVars, policy, StampRanks>>

WellFormed ==
    /\ CoreWellFormed
    /\ PolicyTypeOK
    /\ EvictableSetInv
    /\ GhostTypeOK

\* Canonical under key and block renaming when well formed: the queue as
\* <<size, rank>> per position, the held entries as a bag of shapes.
QuotientView ==
    IF WellFormed
       THEN <<"quotient",
              [i \in DOMAIN queue |-> <<Size(queue[i]), Rank(queue[i])>>],
              BagOf(Live \ Evictable, Shape), FreeCount, evictable>>
       ELSE <<"raw", GhostView>>
=============================================================================
