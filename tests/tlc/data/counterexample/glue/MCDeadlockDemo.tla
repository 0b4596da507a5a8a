-------------------------- MODULE MCDeadlockDemo ---------------------------
(* A deliberately deadlocking model: mark_ready, discard and pin_if_ready  *)
(* are disabled, so once every key holds a not-ready entry no step is left. *)
EXTENDS EmbeddingCacheFifo

Never(k) == FALSE
=============================================================================
