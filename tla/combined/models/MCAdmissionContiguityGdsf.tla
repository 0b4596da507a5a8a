---------------------- MODULE MCAdmissionContiguityGdsf ---------------------
(***************************************************************************)
(* Root of the models of the doorkeeper with contiguity over policy gdsf:  *)
(* its policy module defines the hooks, and the bare INSTANCE binds the    *)
(* hooks, constants and variables of EmbeddingCacheAdmissionContiguity to  *)
(* the root's of the same names. tla/models.json gives each model's        *)
(* config.                                                                 *)
(***************************************************************************)
EXTENDS EmbeddingCacheGdsf, EmbeddingCacheAdmissionParams, EmbeddingCacheContiguityParams, TLC

INSTANCE EmbeddingCacheAdmissionContiguity

\* gdsf's clock grows without bound: the view keeps each priority relative
\* to it (the clock shift of tla/README.md, Reductions).
AdmissionContiguityGdsfView ==
    AdmissionViewOf([policy EXCEPT !.prio = [k \in DOMAIN @ |-> @[k] - policy.clock],
                                   !.clock = 0])
=============================================================================
