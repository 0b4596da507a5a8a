------------------------ MODULE MCBugEvictOneTooMany ------------------------
(***************************************************************************)
(* Bug model (fifo): the eviction loop evicts one entry too many.          *)
(* The spec with Enough <- EnoughOneTooMany (EmbeddingCacheBugs); 3 keys,  *)
(* 3 blocks, pin depth 2, view GhostView.                                  *)
(* Expected: TLC reports EvictOnlyAsNeededProp violated.                   *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
