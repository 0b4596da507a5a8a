---------------------- MODULE MCBrokenFifoRefinesCore ----------------------
(* A deliberately broken refinement through the glue: MCFifoRefinesCore    *)
(* (CacheSpec, whose actions reach the root through the fifo module's bare *)
(* INSTANCE EmbeddingCachePolicy) with the eviction loop evicting one      *)
(* entry too many (Enough <- [EmbeddingCachePolicy] EnoughOneTooMany).     *)
EXTENDS EmbeddingCacheFifo

EnoughOneTooMany(n, got) == FreeCount + SetBlocks(got) > n
=============================================================================
