---------------- MODULE EmbeddingCacheAdmissionContiguity ----------------
(***************************************************************************)
(* The doorkeeper and contiguity-aware eviction at once, over the cache   *)
(* of any policy (spec/SPEC.md sections 13.1 and 14.1).  The filter is    *)
(* asked whenever the alloc would evict anything: a needed victim (fewer  *)
(* than n blocks free), or an extra one (no free run holds n while an     *)
(* entry is evictable): the admission layer's Evicts, WouldEvictUnder(n,  *)
(* Contiguity).  So a one-time item pushes nothing out, the extra victims *)
(* included.  A declined alloc returns None and changes nothing but the   *)
(* door (DeclineAlloc, the doorkeeper's).  An admitted alloc, and one     *)
(* whose n blocks are free in one run, evicts by the contiguity loop: the *)
(* needed victims, then up to Contiguity extra ones while no free run     *)
(* holds n (ContiguousCacheAlloc).  Every successful alloc takes its key  *)
(* off the door; no other call touches it.                                *)
(*                                                                        *)
(* Nothing is restated: this module extends both layers (each declares    *)
(* the hooks, policy and Glue through EmbeddingCacheLayer, so once) and   *)
(* composes their operators: the doorkeeper's AdmitThrough around the     *)
(* contiguity loop's alloc, its DeclineAlloc and UntouchedNext.  The      *)
(* properties of both layers are theirs, checked on this spec by the      *)
(* models (models/MCAdmissionContiguity<Policy>.cfg).  Block level only   *)
(* (contiguity's ASSUME).  A root extends a policy module and both        *)
(* layers' Params and writes a bare                                       *)
(* `INSTANCE EmbeddingCacheAdmissionContiguity`.                          *)
(*                                                                        *)
(* Left out, as in each layer: the policies' order properties beyond      *)
(* ContiguityOrderProp, leases, liveness.  The composition refines the    *)
(* core's ContiguousFilteredSpec(Contiguity), policy and door hidden      *)
(* (AdmissionContiguityRefinesCore).                                      *)
(***************************************************************************)
EXTENDS EmbeddingCacheAdmission, EmbeddingCacheContiguity

\* alloc(k, n) the doorkeeper lets through (or need not ask about), with
\* the contiguity loop's victims; k leaves the door.
AdmitContiguousAlloc(k, n) == AdmitThrough(k, n, ContiguousCacheAlloc(k, n))

AdmissionContiguityNext ==
    \/ \E k \in Keys, n \in 0 .. N : AdmitContiguousAlloc(k, n) \/ DeclineAlloc(k, n)
    \/ UntouchedNext

AdmissionContiguitySpec == AdmissionInit /\ [][AdmissionContiguityNext]_admissionVars

\* The filtered cache with contiguity does only what the core allows it
\* (the core's ContiguousFilteredSpec(Contiguity), written out: TLC 2.15
\* rejects a temporal formula reached through an operator with arguments).
AdmissionContiguityRefinesCore ==
    Glue!Init /\ [][Glue!ContiguousFilteredNext(Contiguity)]_<<entries, free, evictable, lastOp>>
=============================================================================
