---------------------------- MODULE MCLeaseGdsf -----------------------------
(***************************************************************************)
(* Root of the lease models of policy gdsf: its policy module defines the  *)
(* hooks, and the bare INSTANCE binds the hooks, constants and variables   *)
(* of the lease module (EmbeddingCacheLeases) to the root's of the same    *)
(* names. tla/models.json gives each model's config.                       *)
(***************************************************************************)
EXTENDS EmbeddingCacheGdsf, EmbeddingCacheLeaseParams, TLC

INSTANCE EmbeddingCacheLeases

\* gdsf's clock grows without bound: the view keeps each priority relative
\* to it (the clock shift of tla/README.md, Reductions: adding a constant
\* to clock and every prio maps behaviours to behaviours).
LeaseGdsfView ==
    LeaseViewOf([policy EXCEPT !.prio = [k \in DOMAIN @ |-> @[k] - policy.clock],
                               !.clock = 0])
=============================================================================
