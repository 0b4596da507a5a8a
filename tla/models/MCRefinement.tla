---------------------------- MODULE MCRefinement ----------------------------
(***************************************************************************)
(* Refinement model: the fifo policy at block level implements the same   *)
(* module at counts level (Level = "counts") under the mapping below      *)
(* (sizes for block sets, a number for the free set).  The counts level   *)
(* is not a copy: it is the same definitions with the other block store.  *)
(* Checked without any reduction but dropping lastOp                      *)
(* (PolicyHistoryView), so it does not rely on the quotient argument it  *)
(* supports.                                                               *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifo

Counts == INSTANCE EmbeddingCacheFifo
              WITH Level   <- "counts",
                   entries <- [k \in DOMAIN entries |->
                                  [size |-> Cardinality(entries[k].blocks),
                                   pins |-> entries[k].pins]],
                   free    <- Cardinality(free)

\* The counts-level spec, as a property of block-level behaviours.
CountsSpec == Counts!CacheSpec
=============================================================================
