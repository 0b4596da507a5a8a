------------------------ MODULE EmbeddingCacheReplay ------------------------
(***************************************************************************)
(* The cuts of the replay inputs (the MCReplay models), written once; each *)
(* extends its policy module (and, for an alloc rule's replay input, the   *)
(* rule's parameters module and a bare INSTANCE of the rule's module) and  *)
(* imports this one with a bare `INSTANCE EmbeddingCacheReplay` (its       *)
(* parameters are the model's own names). Two cuts keep a state graph      *)
(* small enough to replay in CI:                                           *)
(*  - ReplayDepth bounds the distance from Init (DepthConstraint, a        *)
(*    CONSTRAINT);                                                         *)
(*  - an Alloc takes the lowest n ids of its pool (CanonicalAlloc, an      *)
(*    ACTION_CONSTRAINT). The replay compares block counts, not ids (the   *)
(*    spec leaves the choice open), so every other choice of S gives an    *)
(*    edge the replay would check identically. Not so under contiguity     *)
(*    (MCReplayContiguity<Policy>): where the free ids lie decides what a  *)
(*    later alloc evicts, so those graphs keep every choice and the replay *)
(*    follows the code's (block-exact). The admission inputs are at counts *)
(*    level: no ids to choose.                                             *)
(***************************************************************************)
EXTENDS Integers, TLC

CONSTANT ReplayDepth    \* explore states at most this many steps from Init

VARIABLES entries, free, lastOp   \* the core's (EmbeddingCacheParams)

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
            victims == DOMAIN entries \ DOMAIN entries'
        IN  entries'[k].blocks =
                Lowest(lastOp'.n, free \cup UNION {entries[v].blocks : v \in victims})
=============================================================================
