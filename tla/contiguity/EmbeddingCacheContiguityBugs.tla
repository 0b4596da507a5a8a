------------------- MODULE EmbeddingCacheContiguityBugs -------------------
(***************************************************************************)
(* Realistic defects of the contiguity loop, each a drop-in replacement   *)
(* for one operator of EmbeddingCacheContiguity (KeepEvicting, the loop's *)
(* decision, or ExtraVictim): a bug model's config substitutes it          *)
(* (`KeepEvicting <- [EmbeddingCacheContiguity] Buggy`) and checks only   *)
(* the property it must break; tla/models.json states each defect and its *)
(* expectation.  The bug models run fifo (models/MCContiguityBugs.tla).   *)
(***************************************************************************)
EXTENDS EmbeddingCacheContiguity

\* EvictBeyondNeedBoundedProp: an off-by-one bound, so an alloc may evict
\* Contiguity + 1 victims beyond need.
KeepEvictingOneTooMany(n, got, extra) ==
    extra <= Contiguity /\ ~Glue!HasRun(FreeWith(got), n)

\* ExtraEvictionOnlyWithoutRunProp: the run test is left out, so every
\* alloc evicts Contiguity extra victims, even when a free run holds n.
KeepEvictingDespiteRun(n, got, extra) == extra < Contiguity

\* ExtraEvictionUntilRunProp: the loop ends at enough, as without
\* contiguity: entries stay scattered although the rule would evict for a run.
KeepEvictingNever(n, got, extra) == FALSE

\* ContiguityOrderProp: the extra victim is taken from the wrong end of
\* fifo's queue (its newest entry), not the policy's next victim.
ExtraVictimNewest(p, sz) ==
    [victim |-> p.queue[Len(p.queue)], p |-> [p EXCEPT !.queue = SubSeq(@, 1, Len(@) - 1)]]
=============================================================================
