"""The alloc contract's conditions for contiguity-aware eviction (spec/SPEC.md section 14).

Each is an icontract postcondition of ``transitions.alloc``, composed into
``contracts.alloc_contract`` under the name of the rule it states. They read
the plan ``snapshots.plan_alloc`` made before the call (its victims include
contiguity's extras, planned by ``run_seeker.RunSeeker`` through the policy's
``plan_victims``) and count what the alloc evicted, in O(1) or O(victims).
Without contiguity each holds trivially: ``EvictOnlyAsNeededProp`` and the
policy's order property say it all.
"""

from __future__ import annotations

from typing import Protocol

from .entry import CacheEntry
from .snapshots import AllocPlan, Snapshot
from .state import CacheState


class Old(Protocol):
    """icontract's OLD, as these conditions read it: the alloc contract's snapshots."""

    pre: Snapshot
    plan: AllocPlan


def _evicted_count(OLD: Old, s: CacheState) -> int:
    """How many entries a successful alloc evicted (one entry came). O(1)."""
    return OLD.pre.entries_len + 1 - len(s.entries)


def alloc_evicts_within_bound(OLD: Old, s: CacheState, result: CacheEntry | None) -> bool:
    """At most ``contiguity`` victims beyond the needed ones (O(1)). Without contiguity
    EvictOnlyAsNeededProp and the policy's order property say it all."""
    return (
        result is None
        or not s.contiguity
        or (_evicted_count(OLD, s) <= OLD.plan.needed + s.contiguity)
    )


def alloc_evicts_extra_only_without_run(OLD: Old, s: CacheState, result: CacheEntry | None) -> bool:
    """No victim beyond the plan's, whose extras end at the first free run of n (O(1))."""
    return (
        result is None
        or not s.contiguity
        or (_evicted_count(OLD, s) <= len(OLD.plan.victims.victims))
    )


def alloc_evicts_extra_until_run(OLD: Old, s: CacheState, result: CacheEntry | None) -> bool:
    """Every victim of the plan, whose extras go on until a free run holds n (O(1))."""
    return (
        result is None
        or not s.contiguity
        or (_evicted_count(OLD, s) >= len(OLD.plan.victims.victims))
    )


def alloc_evicts_next_victims(OLD: Old, s: CacheState, result: CacheEntry | None) -> bool:
    """With contiguity, the victims, extra ones too, are the plan's: the policy's next
    ones in its order (O(victims))."""
    return (
        result is None
        or not s.contiguity
        or (not any(key in s.entries for key in OLD.plan.victims.victims))
    )
