---------------------------- MODULE MCReplayWide ----------------------------
(***************************************************************************)
(* The deep model's constants (4 keys, 6 blocks, pin depth 2) without any *)
(* view or symmetry, cut at a depth, so that its exact state graph can be  *)
(* dumped and every edge replayed on the Python code (verify/replay.py).  *)
(* Not a proof model: MCDeep checks the invariants on the whole space.    *)
(*                                                                         *)
(* Two cuts keep the graph small enough to replay in CI:                   *)
(*  - ReplayDepth bounds the distance from Init;                           *)
(*  - an Alloc takes the lowest n ids of its pool.  The replay compares    *)
(*    block counts, not ids (the spec leaves the choice open), so every    *)
(*    other choice of S gives an edge the replay would check identically.  *)
(***************************************************************************)
EXTENDS EmbeddingCacheFifo, TLC

CONSTANT ReplayDepth    \* explore states at most this many steps from Init

\* TLCGet("level") is the length of the path that reached the state.
DepthConstraint == TLCGet("level") <= ReplayDepth

\* The n lowest ids of a set of block ids.
RECURSIVE Lowest(_, _)
Lowest(n, S) == IF n = 0 THEN {}
                ELSE LET m == CHOOSE b \in S : \A c \in S : b <= c
                     IN  {m} \cup Lowest(n - 1, S \ {m})

\* Only the Alloc steps that take the lowest ids of their pool.
CanonicalAlloc ==
    lastOp'.op = "Alloc" =>
        LET k == lastOp'.key
        IN  entries'[k].blocks = Lowest(lastOp'.n, free \cup UNION {entries[v].blocks : v \in Live \ DOMAIN entries'})
=============================================================================
