------------------------- MODULE EmbeddingCacheFifo -------------------------
(***************************************************************************)
(* Eviction policy "fifo" (the seed's, the default): a queue of E, oldest  *)
(* first.  ready/release append at the tail, hold removes, evict takes the *)
(* head.  spec/POLICIES.md, section "fifo".                  *)
(*                                                                         *)
(* A policy module (the same layout in every one):                        *)
(*   - the policy's constants, and its state: the variable policy, a      *)
(*     record of the policy's variables (here [queue]);                   *)
(*   - the hooks EmbeddingCachePolicy declares (PInit, Admit, Forget,     *)
(*     Ready, Hit, Hold, Release, HasVictim, EvictOne), as constant-level *)
(*     functions of a policy state;                                       *)
(*   - INSTANCE EmbeddingCachePolicy: the core and the glue (CacheSpec,    *)
(*     CacheNext, CacheAlloc, ..., CoreSpec), written once;               *)
(*   - names for the record's fields, PolicyTypeOK, and EvictableSetInv:  *)
(*     its structure holds exactly E, each key once.                      *)
(* Its order property (EvictOldestFirstProp) is stated on a ghost clock   *)
(* in EmbeddingCacheFifoCheck, independently of the queue.                *)
(***************************************************************************)
EXTENDS EmbeddingCacheLib, EmbeddingCacheParams

VARIABLE
    policy      \* [queue]: E, oldest first (_entries_free_list)

-----------------------------------------------------------------------------
(* The hooks.                                                              *)

PInit == [queue |-> <<>>]

Admit(p, k, s)   == p
Forget(p, k)     == p
Ready(p, k, s)   == [p EXCEPT !.queue = Append(@, k)]
Hit(p, k)        == p
Hold(p, k)       == [p EXCEPT !.queue = Remove(@, k)]
Release(p, k, s) == [p EXCEPT !.queue = Append(@, k)]

\* A victim is left to choose.
HasVictim(p) == p.queue # <<>>

\* Evict the head of the queue.
EvictOne(p, sz) == [victim |-> Head(p.queue), p |-> [p EXCEPT !.queue = Tail(@)]]

\* The policy state as the layers' views compare it (EmbeddingCacheLayer):
\* finite as it is, so itself.
ViewState(p) == p

-----------------------------------------------------------------------------
INSTANCE EmbeddingCachePolicy

queue == policy.queue

PolicyTypeOK == policy \in [queue : Seq(Keys)]

\* Every policy state of PolicyTypeOK /\ EvictableSetInv at an inductive
\* model's bounds (EmbeddingCacheInductive): every queue of at most |Keys|
\* keys (EvictableSetInv's queue holds each key once).
PolicyStates == {[queue |-> q] : q \in SeqsOf(Keys, Cardinality(Keys))}

\* The policy's size (len(policy) in has_held_entries).
PolicySize == Len(queue)

\* The queue holds exactly E, each key once.
EvictableSetInv ==
    /\ Range(queue) = Evictable
    /\ Len(queue) = Cardinality(Range(queue))
    /\ PolicySize = Cardinality(Evictable)
=============================================================================
