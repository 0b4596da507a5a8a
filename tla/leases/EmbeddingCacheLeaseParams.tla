--------------------- MODULE EmbeddingCacheLeaseParams ---------------------
(***************************************************************************)
(* The lease layer's constants and variables, declared once (only          *)
(* declarations, as EmbeddingCacheParams for the core): the lease module   *)
(* EmbeddingCacheLeases and every root that instantiates it extend this,   *)
(* so that its bare INSTANCE substitutes each by the root's own.           *)
(***************************************************************************)
CONSTANTS
    LeaseIds,     \* the lease objects a model tracks (slots, reused once ended)
    MaxTime,      \* the clock's bound: Tick advances now up to it, then shifts
    MaxDuration   \* the longest lease a call asks for: seconds in 0 .. MaxDuration

VARIABLES
    now,          \* the clock (cache.clock()): 0 .. MaxTime
    lease,        \* lease[l]: [state, key, deadline] of lease object l
    plain,        \* plain[k]: the plain pins (pin/pin_if_ready) entry k holds
    settled       \* a call has run since the last Tick (LeaseDeadlineInv)
=============================================================================
