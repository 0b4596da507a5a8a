---------------------------- MODULE MCReplayGdsf ----------------------------
(***************************************************************************)
(* Replay input for the gdsf policy: 3 keys, 3 blocks, pin depth 2, no   *)
(* view, cut at ReplayDepth, Alloc taking the lowest n ids of its pool    *)
(* (ACTION_CONSTRAINT CanonicalAlloc), lastOp recording each step.  Its   *)
(* states expose the policy's variables by the names of                   *)
(* spec/POLICY_SEMANTICS.draft.md.  Not a proof model.                    *)
(***************************************************************************)
EXTENDS EmbeddingCacheGdsf, TLC

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
