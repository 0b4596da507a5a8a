------------------ MODULE EmbeddingCacheAdmissionParams ------------------
(***************************************************************************)
(* The admission layer's constant and variable, declared once (only       *)
(* declarations, as EmbeddingCacheParams for the core): the admission     *)
(* module and every root that instantiates it extend this, so that its    *)
(* bare INSTANCE substitutes each by the root's own.  It extends the     *)
(* contiguity layer's (its bound, Contiguity: 0 in a root without it),    *)
(* because what "would evict" means, and so when the filter is asked,    *)
(* depends on it (spec/SPEC.md section 13.1).                             *)
(***************************************************************************)
EXTENDS EmbeddingCacheContiguityParams

CONSTANT
    DoorCapacity  \* how many declined keys the doorkeeper remembers (>= 1)

VARIABLE
    door          \* the declined keys remembered, oldest first (a sequence)
=============================================================================
