------------------------ MODULE MCBugGdsfClockStuck -------------------------
(***************************************************************************)
(* Bug model (gdsf): the clock does not advance on eviction.               *)
(* The spec with NextClock <- ClockStays (EmbeddingCacheGdsfBugs); 3 keys, *)
(* 3 blocks, pin depth 2, view GdsfView.  Every other gdsf invariant and  *)
(* EvictLowestPriorityProp still hold (victims are still the lowest       *)
(* priorities, just computed from a stale clock).                         *)
(* Expected: TLC reports GdsfClockInv violated.                            *)
(***************************************************************************)
EXTENDS EmbeddingCacheGdsfBugs
=============================================================================
