------------------------ MODULE MCBugFifoHeadInsert -------------------------
(***************************************************************************)
(* Bug model (fifo): mark_ready and the last unpin insert at the HEAD of   *)
(* the queue (not a refinement check: the ghost-clock order property       *)
(* catches it).                                                            *)
(* The spec with Ready <- ReadyAtHead, Release <- ReleaseAtHead            *)
(* (EmbeddingCacheBugs); 3 keys, 3 blocks, pin depth 2, view GhostView.    *)
(* Expected: TLC reports EvictOldestFirstProp violated.                    *)
(***************************************************************************)
EXTENDS EmbeddingCacheBugs
=============================================================================
