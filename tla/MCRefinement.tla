---------------------------- MODULE MCRefinement ----------------------------
(***************************************************************************)
(* Refinement model: the block-level spec implements the counts-level     *)
(* spec under the mapping below (sizes for block sets, a number for the   *)
(* free set).  Checked without any reduction, so it does not rely on the  *)
(* quotient argument it supports; only lastOp is dropped (HistoryView).  *)
(***************************************************************************)
EXTENDS EmbeddingCacheReductions

Counts == INSTANCE EmbeddingCacheCounts
              WITH entries <- [k \in DOMAIN entries |->
                                  [size |-> Cardinality(entries[k].blocks),
                                   pins |-> entries[k].pins]],
                   free    <- Cardinality(free)

\* The counts-level spec, as a property of block-level behaviours.
CountsSpec == Counts!Spec
=============================================================================
