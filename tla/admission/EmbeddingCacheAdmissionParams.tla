------------------ MODULE EmbeddingCacheAdmissionParams ------------------
(***************************************************************************)
(* The admission layer's constant and variable, declared once (only       *)
(* declarations, as EmbeddingCacheParams for the core): the admission     *)
(* module and every root that instantiates it extend this, so that its    *)
(* bare INSTANCE substitutes each by the root's own.                      *)
(***************************************************************************)
CONSTANT
    DoorCapacity  \* how many declined keys the doorkeeper remembers (>= 1)

VARIABLE
    door          \* the declined keys remembered, oldest first (a sequence)
=============================================================================
