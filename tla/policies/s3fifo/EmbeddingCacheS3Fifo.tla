------------------------ MODULE EmbeddingCacheS3Fifo ------------------------
(***************************************************************************)
(* Eviction policy "s3fifo" (Yang et al., SOSP 2023, adapted to pins).     *)
(* spec/POLICIES.md, section "s3fifo".  Same layout as      *)
(* EmbeddingCacheFifo (see there); the glue is EmbeddingCachePolicy.      *)
(*                                                                         *)
(* Two queues of E, small (S) and main (M), each key in its home's queue; *)
(* a ghost queue of recently evicted (non-live) keys with their sizes.    *)
(* admit: home M if the key is in the ghost (it leaves it), else S.       *)
(* ready: freq 0, append to home queue.  hit: freq Min(freq + 1, 3).      *)
(* hold: leave the home queue; release: append to it again.              *)
(* evict loop: if S is non-empty and (S holds >= SmallTarget blocks or M  *)
(* is empty): S's head moves to M (freq reset) if used, else is evicted   *)
(* into the ghost (trimmed to GhostCapacity blocks, oldest first);        *)
(* otherwise M's head is requeued with freq - 1 if used, else evicted.    *)
(* Order property: EvictProbationFirstProp (EmbeddingCacheS3FifoCheck).   *)
(***************************************************************************)
EXTENDS EmbeddingCacheLib, EmbeddingCacheParams

CONSTANTS
    SmallTarget,    \* blocks S should hold (Max(1, N \div 10))
    GhostCapacity   \* blocks the ghost may record (N - SmallTarget)

ASSUME S3FifoAssumption == SmallTarget \in Nat \ {0} /\ GhostCapacity \in Nat

FreqCap == 3

VARIABLE
    policy      \* [small, main, ghost, freq, home]:
                \*   small: E homed in S, oldest first
                \*   main:  E homed in M, oldest first
                \*   ghost: <<key, size>> of evicted keys, oldest first
                \*   freq:  ready live keys -> 0 .. FreqCap
                \*   home:  live keys -> "S" or "M"

GhostKeys(g) == {g[i][1] : i \in DOMAIN g}

RECURSIVE GhostBlocks(_)
GhostBlocks(g) == IF g = <<>> THEN 0 ELSE Head(g)[2] + GhostBlocks(Tail(g))

\* The blocks of a queue of live keys, their sizes sz.
RECURSIVE QueueBlocks(_, _)
QueueBlocks(q, sz) == IF q = <<>> THEN 0 ELSE sz[Head(q)] + QueueBlocks(Tail(q), sz)

-----------------------------------------------------------------------------
(* The hooks.                                                              *)

PInit == [small |-> <<>>, main |-> <<>>, ghost |-> <<>>,
          freq |-> [k \in {} |-> 0], home |-> [k \in {} |-> "S"]]

\* Append k to the queue of its home / remove it from there.
Enqueue(p, k) == IF p.home[k] = "S" THEN [p EXCEPT !.small = Append(@, k)]
                                    ELSE [p EXCEPT !.main = Append(@, k)]
Dequeue(p, k) == IF p.home[k] = "S" THEN [p EXCEPT !.small = Remove(@, k)]
                                    ELSE [p EXCEPT !.main = Remove(@, k)]

\* The ghost trimmed, oldest first, to at most GhostCapacity blocks.
RECURSIVE Trim(_)
Trim(g) == IF GhostBlocks(g) > GhostCapacity THEN Trim(Tail(g)) ELSE g

Admit(p, k, s) ==
    IF k \in GhostKeys(p.ghost)
       THEN [p EXCEPT !.home = Put(@, k, "M"),
                      !.ghost = SelectSeq(@, LAMBDA e : e[1] # k)]
       ELSE [p EXCEPT !.home = Put(@, k, "S")]
Forget(p, k)     == [p EXCEPT !.home = Drop(@, k)]
Ready(p, k, s)   == Enqueue([p EXCEPT !.freq = Put(@, k, 0)], k)
Hit(p, k)        == [p EXCEPT !.freq[k] = Min(@ + 1, FreqCap)]
Hold(p, k)       == Dequeue(p, k)
Release(p, k, s) == Enqueue(p, k)

HasVictim(p) == p.small # <<>> \/ p.main # <<>>

\* S is the queue to take from (sz: the sizes of the live keys).
FromSmall(p, sz) ==
    p.small # <<>> /\ (QueueBlocks(p.small, sz) >= SmallTarget \/ p.main = <<>>)

\* One eviction: move used heads until one head is evicted.
RECURSIVE EvictOne(_, _)
EvictOne(p, sz) ==
    IF FromSmall(p, sz)
       THEN LET k == Head(p.small) IN
            IF p.freq[k] >= 1
               THEN EvictOne([p EXCEPT !.small = Tail(@), !.main = Append(@, k),
                                       !.home[k] = "M", !.freq[k] = 0], sz)
               ELSE [victim |-> k,
                     p |-> [p EXCEPT !.small = Tail(@),
                                     !.ghost = Trim(Append(@, <<k, Max(sz[k], 1)>>)),
                                     !.freq = Drop(@, k), !.home = Drop(@, k)]]
       ELSE LET k == Head(p.main) IN
            IF p.freq[k] >= 1
               THEN EvictOne([p EXCEPT !.main = Append(Tail(@), k),
                                       !.freq[k] = @ - 1], sz)
               ELSE [victim |-> k,
                     p |-> [p EXCEPT !.main = Tail(@),
                                     !.freq = Drop(@, k), !.home = Drop(@, k)]]

\* The policy state as the layers' views compare it (EmbeddingCacheLayer):
\* finite as it is, so itself.
ViewState(p) == p

-----------------------------------------------------------------------------
INSTANCE EmbeddingCachePolicy

small == policy.small
main  == policy.main
ghost == policy.ghost
freq  == policy.freq
home  == policy.home

PolicyTypeOK ==
    /\ DOMAIN policy = {"small", "main", "ghost", "freq", "home"}
    /\ small \in Seq(Keys) /\ main \in Seq(Keys)
    /\ \A i \in DOMAIN ghost : ghost[i][1] \in Keys /\ ghost[i][2] \in 0 .. N
    /\ \A k \in DOMAIN freq : freq[k] \in 0 .. FreqCap
    /\ \A k \in DOMAIN home : home[k] \in {"S", "M"}
    /\ DOMAIN freq \subseteq Keys /\ DOMAIN home \subseteq Keys

\* Every policy state of PolicyTypeOK /\ EvictableSetInv at an inductive
\* model's bounds (EmbeddingCacheInductive): E split between small and main,
\* each in any order; home "S" or "M" for a held key, its queue's for a key
\* of E; freq on the ready keys; the ghost any sequence of distinct
\* non-live keys, each with a size, within its capacity (the domains and
\* bounds EvictableSetInv fixes).
PolicyStates ==
    LET ready == {k \in Live : entries[k].pins >= 0}
        ghosts == {g \in SeqsOf((Keys \ Live) \X (0 .. N), Cardinality(Keys)) :
                      Len(g) = Cardinality(GhostKeys(g)) /\ GhostBlocks(g) <= GhostCapacity}
    IN  UNION {{[small |-> s, main |-> m, ghost |-> g, freq |-> f,
                 home |-> [k \in Live |-> IF k \in Range(s) THEN "S"
                                          ELSE IF k \in Range(m) THEN "M" ELSE h[k]]] :
                   s \in Orders(S), m \in Orders(Evictable \ S), g \in ghosts,
                   f \in [ready -> 0 .. FreqCap],
                   h \in [Live \ Evictable -> {"S", "M"}]} :
               S \in SUBSET Evictable}

PolicySize == Len(small) + Len(main)

\* small and main hold exactly E, each key once, each in its home's queue;
\* home is defined on the live keys, freq on the ready ones; the ghost
\* holds distinct non-live keys within its capacity.
EvictableSetInv ==
    /\ Range(small) \cup Range(main) = Evictable
    /\ Range(small) \cap Range(main) = {}
    /\ Len(small) = Cardinality(Range(small))
    /\ Len(main) = Cardinality(Range(main))
    /\ DOMAIN home = Live
    /\ \A k \in Range(small) : home[k] = "S"
    /\ \A k \in Range(main) : home[k] = "M"
    /\ DOMAIN freq = {k \in Live : entries[k].pins >= 0}
    /\ GhostKeys(ghost) \cap Live = {}
    /\ Len(ghost) = Cardinality(GhostKeys(ghost))
    /\ GhostBlocks(ghost) <= GhostCapacity
    /\ PolicySize = Cardinality(Evictable)
=============================================================================
