--------------------- MODULE MCBugGdsfEvictFirstJoined ----------------------
(***************************************************************************)
(* Bug model (gdsf): gdsf evicts the key that joined E first, ignoring     *)
(* priorities.                                                             *)
(* The spec with VictimPos <- FirstJoinedPos (EmbeddingCacheGdsfBugs);   *)
(* 3 keys, 3 blocks, pin depth 2, view GdsfView.                           *)
(* Expected: TLC reports EvictLowestPriorityProp violated.                 *)
(***************************************************************************)
EXTENDS EmbeddingCacheGdsfBugs
=============================================================================
