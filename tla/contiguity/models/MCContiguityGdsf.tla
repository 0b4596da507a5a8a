------------------------- MODULE MCContiguityGdsf -------------------------
(***************************************************************************)
(* Root of the contiguity models of policy gdsf: its policy module       *)
(* defines the hooks, and the bare INSTANCE binds the hooks, constants and *)
(* variables of the contiguity module (EmbeddingCacheContiguity) to the    *)
(* root's of the same names. tla/models.json gives each model's config.    *)
(***************************************************************************)
EXTENDS EmbeddingCacheGdsf, EmbeddingCacheContiguityParams, TLC

INSTANCE EmbeddingCacheContiguity

\* gdsf's clock grows without bound: the view keeps each priority relative
\* to it (the clock shift of tla/README.md, Reductions).
ContiguityGdsfView ==
    ContiguityViewOf([policy EXCEPT !.prio = [k \in DOMAIN @ |-> @[k] - policy.clock],
                                    !.clock = 0])
=============================================================================
