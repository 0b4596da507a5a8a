------------------------ MODULE MCBrokenRefinement -------------------------
(* A deliberately broken refinement: the fifo policy's eviction loop evicts *)
(* one entry too many, so some Alloc step is not a step of the core spec.   *)
EXTENDS EmbeddingCacheBugs
=============================================================================
