---------------------- MODULE MCBugPinAlwaysDecrements ----------------------
(***************************************************************************)
(* Bug model (fifo): pin decrements the counter even when already pinned.  *)
(* The spec with PinStep <- PinStepAlwaysDecrements (EmbeddingCacheBugs);  *)
(* 3 keys, 3 blocks, pin depth 2, view GhostView.                          *)
(* Expected: TLC reports TypeOK violated.                                  *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
