------------------------ MODULE MCBugEvictOneTooMany ------------------------
(***************************************************************************)
(* Bug model: the eviction loop evicts one entry too many.                 *)
(* The spec with Evict replaced by EvictOneTooMany                         *)
(* (EmbeddingCacheBugs); 3 keys, 3 blocks, pin depth 2.                    *)
(* Expected: TLC reports EvictOnlyAsNeededProp violated.                   *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
