----------------------- MODULE EmbeddingCacheInductive -----------------------
(***************************************************************************)
(* Inductiveness at small bounds (spec/SPEC.md section 15): the initial    *)
(* states of an inductive model are EVERY state of TypeOK /\ Inv at the   *)
(* model's bounds, its step is one step of the layer's Next, and TLC      *)
(* checks Inv on every successor.  Inv passes iff it is inductive at those *)
(* bounds: every step from a state satisfying it keeps it.                 *)
(*                                                                         *)
(* One step only: the variable stepped is FALSE in the initial states and *)
(* the step sets it (OneStep); a successor has no step, so the model runs *)
(* without deadlock checking (manifest: "check_deadlock": false).  The    *)
(* guard is on the action so the spec says it; a CONSTRAINT ~stepped      *)
(* would do too (TLC 2.15 checks invariants on a state outside the        *)
(* constraint, it only does not expand it), while -depth bounds only      *)
(* -simulate's random walks, which are not exhaustive, and -dfid 2 runs   *)
(* one worker and prints no verdict line the launcher reads.              *)
(*                                                                         *)
(* The initial states are enumerated, not sampled: TLC evaluates the      *)
(* conjuncts of Init in order, binding a variable at its `\in` and        *)
(* dropping a partial state at the first conjunct that is FALSE.  So the  *)
(* generators below bind the core's variables one at a time and test the  *)
(* invariants that read only those as soon as they are bound: a filter,   *)
(* never a restriction, since the root's Init then conjoins TypeOK and    *)
(* every invariant of the model again.  So a generator's set must hold   *)
(* every value of TypeOK /\ Inv at the bounds (the keys, N, MaxPins, and  *)
(* a policy's or layer's own, which its generator states), and may hold   *)
(* more: CoreStates holds every value TypeOK allows; a policy's           *)
(* PolicyStates, every policy state of PolicyTypeOK /\ EvictableSetInv    *)
(* (both in every layer's Inv); GhostStates, a layer's states (leases     *)
(* LeaseLayerStates, admission DoorStates), likewise.                     *)
(*                                                                         *)
(* lastOp is fixed to the initial record: no action and no invariant but  *)
(* TypeOK reads it (tla/README.md, Reductions), so a step's successors    *)
(* are the same, up to lastOp, from every value it could hold, and the    *)
(* step itself sets lastOp' (which TypeOK then checks).                   *)
(***************************************************************************)
EXTENDS EmbeddingCacheLib, EmbeddingCacheParams

VARIABLE
    stepped     \* FALSE in the initial states; TRUE after the one step

\* The core, as this module's own instance (a policy's glue names its own Core).
Base == INSTANCE EmbeddingCache

\* Every entry record TypeOK allows at the model's bounds (EntryTypeOK).
EntryRecords ==
    IF Base!IsBlocks THEN [blocks : SUBSET Base!Blocks, pins : Base!NotReady .. MaxPins]
                     ELSE [size : 0 .. N, pins : Base!NotReady .. MaxPins]

\* The core's variables over every value TypeOK allows, lastOp fixed
\* (above).  With conserved TRUE, BlockConservationInv and
\* EvictableCountInv filter as soon as their variables are bound: only
\* for a model whose Inv has both (every layer's but the planted one's,
\* which checks an invariant alone).
CoreStates(conserved) ==
    /\ entries \in UNION {[D -> EntryRecords] : D \in SUBSET Keys}
    /\ free \in IF Base!IsBlocks THEN SUBSET Base!Blocks ELSE 0 .. N
    /\ conserved => Base!BlockConservationInv
    /\ evictable \in 0 .. N
    /\ conserved => Base!EvictableCountInv
    /\ lastOp = [op |-> "Init", key |-> "none", n |-> 0]

\* The one step: A, from an initial state only.
OneStep(A) == ~stepped /\ A /\ stepped' = TRUE
=============================================================================
