-------------------------- MODULE MCInductiveCore --------------------------
(***************************************************************************)
(* The core's invariants are inductive at small bounds (spec/SPEC.md       *)
(* section 15): every state of TypeOK /\ Inv, one step of the core's Next *)
(* (any allowed victims), Inv again (EmbeddingCacheInductive).  Inv is    *)
(* the config's INVARIANTS; InductiveInit conjoins the same list.         *)
(***************************************************************************)
EXTENDS EmbeddingCache, EmbeddingCacheInductive, TLC

InductiveInit ==
    /\ CoreStates(TRUE)
    /\ stepped = FALSE
    /\ TypeOK /\ BlockConservationInv /\ EvictableCountInv
    /\ HeldEntriesInv /\ QuiescenceInv

InductiveSpec == InductiveInit /\ [][OneStep(Next)]_<<vars, stepped>>

\* One invariant alone (MCInductiveQuiescenceAlone): every state of
\* TypeOK /\ AloneInv, none filtered by the invariants it leans on.  A
\* config may check another alone with `AloneInv <- Name` (spec/SPEC.md
\* section 15 lists what each gave).
AloneInv == QuiescenceInv

AloneInit == CoreStates(FALSE) /\ stepped = FALSE /\ TypeOK /\ AloneInv

AloneSpec == AloneInit /\ [][OneStep(Next)]_<<vars, stepped>>

\* Keys are interchangeable: every invariant and step is (TLC keeps one
\* initial state per renaming of the keys; EmbeddingCacheReductions says
\* why it is defined in the root).
KeySymmetry == Permutations(Keys)
=============================================================================
