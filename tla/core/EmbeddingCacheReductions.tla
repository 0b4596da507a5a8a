----------------------- MODULE EmbeddingCacheReductions -----------------------
(***************************************************************************)
(* State-space reductions shared by all policies: a view that drops the   *)
(* history variable, and the core's part of the quotient views, which      *)
(* identify states equal up to a renaming of keys and of block ids.        *)
(* README.md gives the soundness argument; in short, no action            *)
(* distinguishes two keys or two block ids, so renamings map behaviours   *)
(* to behaviours, and every checked invariant and property is invariant   *)
(* under renaming.  Each policy's check module (EmbeddingCache*Check)     *)
(* builds its own QuotientView from these parts and its structure.        *)
(***************************************************************************)
EXTENDS EmbeddingCache, TLC

\* (No SYMMETRY set here: TLC evaluates every constant definition without
\* arguments at start-up, in every module extending this one, so
\* Permutations(Keys) cost each trace check of 10 keys 10! functions, over
\* 10 s of CPU per instance of the glue.  A root that uses SYMMETRY defines
\* it: MCContiguityS3Fifo.)

\* The state without lastOp: no action reads lastOp, so two states that
\* differ only in lastOp have the same successors (up to lastOp').
HistoryView == cacheVars

\* The shared state invariants together.
CoreWellFormed ==
    /\ TypeOK
    /\ BlockConservationInv
    /\ EvictableCountInv
    /\ HeldEntriesInv
    /\ QuiescenceInv

\* The shape of a live entry: <<size, pins>>.
Shape(k) == <<Size(k), entries[k].pins>>

\* The bag of the values F(k) over the keys K, as the set of pairs
\* <<value, how many keys have it>> (canonical: no key appears in it).
BagOf(K, F(_)) ==
    {<<v, Cardinality({k \in K : F(k) = v})>> : v \in {F(k) : k \in K}}

\* The core's canonical form under key and block renaming (no policy):
\* how many live entries of each shape, free blocks, the counter.
CoreQuotient == <<BagOf(Live, Shape), FreeCount, evictable>>

\* The core spec's quotient view (MCCore): a broken state keeps its full
\* value, so it is never merged with a well-formed one.
CoreQuotientView ==
    IF CoreWellFormed THEN <<"quotient", CoreQuotient>>
                      ELSE <<"raw", cacheVars>>
=============================================================================
