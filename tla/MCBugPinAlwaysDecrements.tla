---------------------- MODULE MCBugPinAlwaysDecrements ----------------------
(***************************************************************************)
(* Bug model: pin decrements the counter even when already pinned.         *)
(* The spec with PinStep replaced by PinStepAlwaysDecrements               *)
(* (EmbeddingCacheBugs); 3 keys, 3 blocks, pin depth 2.                    *)
(* Expected: TLC reports TypeOK violated.                                  *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
