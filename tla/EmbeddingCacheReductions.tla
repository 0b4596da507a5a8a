----------------------- MODULE EmbeddingCacheReductions -----------------------
(***************************************************************************)
(* State-space reductions for model checking the block-level spec: a view  *)
(* that drops the history variable, and a quotient view that identifies   *)
(* states equal up to a renaming of keys and of block ids.  README.md     *)
(* gives the soundness argument; in short, no action distinguishes two    *)
(* keys or two block ids, so renamings map behaviours to behaviours, and  *)
(* every checked invariant and property is invariant under renaming.      *)
(***************************************************************************)
EXTENDS EmbeddingCache, TLC

\* Keys are interchangeable (for SYMMETRY; never with liveness).
KeySymmetry == Permutations(Keys)

\* The state without lastOp: no action reads lastOp, so two states that
\* differ only in lastOp have the same successors (up to lastOp').
HistoryView == cacheVars

\* All state invariants together: on states where they hold, the quotient
\* below identifies exactly the states equal up to key and block renaming.
WellFormed ==
    /\ TypeOK
    /\ BlockConservationInv
    /\ EvictQueueInv
    /\ EvictableCountInv
    /\ HeldEntriesInv

\* The shapes an entry outside the queue can have: <<size, pins>>.
HeldShapes == (0 .. N) \X ({NotReady} \cup 1 .. MaxPins)

\* How many live entries outside the queue have each shape (a bag).
HeldBag == [p \in HeldShapes |->
               Cardinality({k \in Live \ Range(queue) :
                               <<Size(k), entries[k].pins>> = p})]

\* The sizes of the queued entries, oldest first.
QueueSizes == [i \in DOMAIN queue |-> Size(queue[i])]

\* The quotient view: canonical under key and block renaming when the state
\* is well formed; a broken state keeps its full value, so it is never
\* merged with a well-formed one and its violation is still reported.
QuotientView ==
    IF WellFormed
       THEN <<"quotient", QueueSizes, HeldBag, Cardinality(free), evictable>>
       ELSE <<"raw", cacheVars>>
=============================================================================
