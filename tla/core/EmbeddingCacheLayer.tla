------------------------- MODULE EmbeddingCacheLayer -------------------------
(***************************************************************************)
(* What a layer over the cache of any policy declares, once: the policy's *)
(* hooks as constants (the glue's names, EmbeddingCachePolicy), the policy*)
(* variable, and the glue itself as the named instance Glue.  The         *)
(* admission filter (tla/admission/) and contiguity (tla/contiguity/)     *)
(* extend it, so a module extending both (tla/combined/) gets each        *)
(* declaration once, from this one module.  A root extends a policy       *)
(* module (which defines the hooks under these names) and writes a bare   *)
(* INSTANCE of the layer: every hook, constant and variable is bound by   *)
(* name to the root's own.                                                *)
(***************************************************************************)
EXTENDS EmbeddingCacheLib, EmbeddingCacheParams

CONSTANTS   \* the policy's hooks (EmbeddingCachePolicy), bound by name by the root
    PInit, Admit(_, _, _), Forget(_, _), Ready(_, _, _), Hit(_, _),
    Hold(_, _), Release(_, _, _), HasVictim(_), EvictOne(_, _),
    ViewState(_)    \* the policy state as views compare it (the policy's)

VARIABLE
    policy      \* the policy's state (the root's policy module's)

Glue == INSTANCE EmbeddingCachePolicy
=============================================================================
