------------------------------- MODULE MCBugs -------------------------------
(***************************************************************************)
(* Root of the bug models of the core and of fifo (EmbeddingCacheBugs):    *)
(* each config substitutes one defect and checks the one invariant or      *)
(* property it must violate; tla/models.json states each defect and its    *)
(* expectation.                                                            *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
