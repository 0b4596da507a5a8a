---------------------- MODULE EmbeddingCacheSieveCheck ----------------------
(***************************************************************************)
(* The sieve policy with ghost variables, to state its order               *)
(* (EvictUnvisitedFromHandProp) from the cache's events rather than from   *)
(* its queue, bits and hand.  The ghosts read the core state only, never   *)
(* the variable policy:                                                    *)
(*   stamp[k]  the clock value when the ready key k became ready (a use    *)
(*             never changes it: SIEVE never moves a key);                 *)
(*   gclock    the logical clock (mark_ready steps so far);                *)
(*   used      the ready keys used (a PinStep) since they became ready or  *)
(*             since the hand last cleared them;                           *)
(*   ghand     the hand as a stamp threshold: the sweep starts at the      *)
(*             oldest evictable key stamped >= ghand, else wraps to the    *)
(*             oldest; 0 when the last victim was the newest ready key.    *)
(*                                                                         *)
(* EvictUnvisitedFromHandProp: the victims of an alloc are exactly the     *)
(* keys the hand rule takes over these ghosts: going through E in stamp    *)
(* order from ghand, cyclically, a used key is cleared and passed, an      *)
(* unused one is evicted (and the sweep continues after it), until enough  *)
(* blocks are free.  Held (pinned) keys are not in E: the sweep passes     *)
(* them without clearing them.                                             *)
(*                                                                         *)
(* The clock grows without bound; the views normalise stamps to ranks and  *)
(* ghand to the number of stamps below it. Why QuotientView is sound:      *)
(* WellFormed adds to the shared invariants PolicyTypeOK, EvictableSetInv, *)
(* GhostTypeOK and GhostAgrees (the queue is in stamp order, used is the   *)
(* set of visited keys, and the number of stamps below ghand is the hand's *)
(* position minus one, or 0 with no hand). On such a state the ghosts are  *)
(* a function of the policy's record up to an order-preserving renaming of *)
(* the stamps, which changes no comparison GhostSweep makes (the clock     *)
(* matters only through those comparisons). So two well-formed states with *)
(* the same quotient (the queue as KeyInfo per position, the hand, the     *)
(* not-ready entries as a bag, the free count, the counter; pinned is not  *)
(* in it: on a well-formed state it is pins > 0) are related by a renaming *)
(* of keys, blocks and stamps, under which the spec, the ghosts and every  *)
(* checked property are invariant: they have isomorphic futures. A state   *)
(* that is not well formed (the ghosts and the policy disagree, as a bug   *)
(* of the order rule makes them) keeps SieveView, the raw state up to the  *)
(* clock's offset, and is never merged; so the bug models use QuotientView *)
(* too (the buggy spec is as symmetric as the correct one).                *)
(***************************************************************************)
EXTENDS EmbeddingCacheSieve   \* (EmbeddingCacheReductions comes with the glue)

VARIABLES
    stamp,      \* ghost: ready live keys -> the clock value when they became ready
    gclock,     \* ghost: the logical clock
    used,       \* ghost: ready keys used since they became ready or were last passed
    ghand       \* ghost: the hand, as a stamp threshold

ghostVars == <<stamp, gclock, used, ghand>>
checkVars == <<fullVars, ghostVars>>

\* The ghosts of an inductive model's initial states (EmbeddingCacheInductive):
\* one value of GhostTypeOK.  Enough: no invariant reads them, and no step's
\* change of the other variables depends on them (GhostStep only writes them).
GhostStates ==
    /\ stamp = [k \in {j \in Live : entries[j].pins >= 0} |-> 0]
    /\ gclock = 0 /\ used = {} /\ ghand = 0

GhostInit == stamp = [k \in {} |-> 0] /\ gclock = 0 /\ used = {} /\ ghand = 0

ReadyKeys == {k \in Live : entries[k].pins >= 0}

\* The member of K with the smallest stamp (K not empty).
Oldest(K) == CHOOSE k \in K : \A j \in K : stamp[k] <= stamp[j]

\* The sweep over the ghosts: t the threshold, u the used keys, got the
\* victims so far; stops when n blocks are free (Enough) or E is spent.
RECURSIVE GhostSweep(_, _, _, _)
GhostSweep(t, u, got, n) ==
    LET cands == Evictable \ got
        ahead == {k \in cands : stamp[k] >= t}
    IN  IF Enough(n, got) \/ cands = {} THEN [victims |-> got, used |-> u, hand |-> t]
        ELSE LET c == Oldest(IF ahead # {} THEN ahead ELSE cands)
                 newer == \E j \in ReadyKeys \ (got \cup {c}) : stamp[j] > stamp[c]
             IN  IF c \in u THEN GhostSweep(stamp[c] + 1, u \ {c}, got, n)
                 ELSE GhostSweep(IF newer THEN stamp[c] + 1 ELSE 0, u, got \cup {c}, n)

\* The ghosts' verdict on the alloc of this step.
GhostEvict == GhostSweep(ghand, used, {}, lastOp'.n)

\* Keys becoming ready get the clock; a PinStep marks a key used; an alloc
\* runs the ghost sweep (its victims leave every ghost).
GhostStep ==
    IF lastOp'.op = "Alloc"
       THEN LET r == GhostEvict
            IN  /\ stamp' = [k \in DOMAIN stamp \ r.victims |-> stamp[k]]
                /\ used' = r.used \ r.victims
                /\ ghand' = r.hand
                /\ UNCHANGED gclock
       ELSE LET joined == {k \in DOMAIN entries' :
                              entries'[k].pins >= 0 /\ k \notin DOMAIN stamp}
                hits == {k \in DOMAIN stamp \cap DOMAIN entries' :
                            entries'[k].pins > entries[k].pins}
            IN  /\ stamp' = [k \in DOMAIN stamp \cup joined |->
                                IF k \in joined THEN gclock ELSE stamp[k]]
                /\ gclock' = gclock + Cardinality(joined)
                /\ used' = used \cup hits
                /\ UNCHANGED ghand

CheckSpec == CacheInit /\ GhostInit /\ [][CacheNext /\ GhostStep]_checkVars

GhostTypeOK ==
    /\ DOMAIN stamp = ReadyKeys
    /\ gclock \in Nat /\ ghand \in Nat
    /\ used \subseteq ReadyKeys

\* SIEVE's rule, from the ghosts: the victims are the ones the hand takes.
EvictUnvisitedFromHandProp ==
    [][lastOp'.op = "Alloc" => Evicted = GhostEvict.victims]_checkVars

-----------------------------------------------------------------------------
(* Views.                                                                  *)

\* The number of stamped keys with stamps below t (0 = the oldest first).
Below(t) == Cardinality({j \in DOMAIN stamp : stamp[j] < t})
StampRanks == [k \in DOMAIN stamp |-> Below(stamp[k])]

\* Drops lastOp and the clock, keeps the ghosts' order (bug models).
SieveView == <<cacheVars, policy, StampRanks, used, Below(ghand)>>

\* The ghosts agree with the policy's state: the queue is in stamp order,
\* the used keys are the visited ones, the hand is where ghand points.
GhostAgrees ==
    /\ \A i, j \in DOMAIN queue : i < j => stamp[queue[i]] < stamp[queue[j]]
    /\ used = {k \in Range(queue) : visited[k]}
    /\ Below(ghand) = IF hand = 0 THEN 0 ELSE hand - 1

WellFormed ==
    /\ CoreWellFormed
    /\ PolicyTypeOK
    /\ EvictableSetInv
    /\ GhostTypeOK
    /\ GhostAgrees

\* What a queued key carries besides its position.
KeyInfo(k) == <<Size(k), entries[k].pins, visited[k]>>

\* Canonical under key and block renaming and under order-preserving
\* renaming of stamps when well formed: the ghosts are then a function of
\* the queue, the bits and the hand (GhostAgrees), so the queue as KeyInfo
\* per position, the hand, the not-ready entries as a bag, the free count
\* and the counter determine every successor up to renaming.
QuotientView ==
    IF WellFormed
       THEN <<"quotient", [i \in DOMAIN queue |-> KeyInfo(queue[i])], hand,
              BagOf(Live \ Range(queue), Shape), FreeCount, evictable>>
       ELSE <<"raw", SieveView>>
=============================================================================
