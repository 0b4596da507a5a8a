------------------------ MODULE EmbeddingCacheParams ------------------------
(***************************************************************************)
(* The core's constants and state variables, declared once (EmbeddingCache *)
(* defines their meaning; spec/POLICIES.md, "Core").  Only   *)
(* declarations: every policy module extends this module and instantiates *)
(* EmbeddingCachePolicy (which extends the core), so these names are the  *)
(* policy module's own and the instance substitutes them implicitly.      *)
(***************************************************************************)

CONSTANTS
    Keys,       \* the content identities (mm_hash values) an entry may have
    N,          \* the pool size; block ids are 0 .. N-1
    MaxPins,    \* model bound on nested pins of one entry (unbounded in code)
    Level       \* the block store: "blocks" or "counts" (EmbeddingCache)

VARIABLES
    entries,    \* live key -> [blocks, pins] or [size, pins]; DOMAIN = live keys
    free,       \* the free blocks: a set of ids, or their number
    evictable,  \* the evictable-block counter (_evictable_block_count)
    lastOp      \* history: last operation [op, key, n]; no action reads it
=============================================================================
