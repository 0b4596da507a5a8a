"""Each lease transition's icontract contract (``lease_transitions``), condition by condition.

As in ``contracts``, and from the same ``contract_parts``: a condition is a
named function whose description is the one name (spec/NAMES.md) of what it
protects; conditions compare the state after the call with an O(1) snapshot
taken before it (``LeaseSnap``), except expiry's, which counts the due
leases only when one is due. In the default build every decorator here
returns the function unchanged.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

from .contract_parts import (
    contract,
    evictable_within_entries,
    left_set_iff_was_evictable,
    post,
    pre,
    snap,
    uncounted_iff_was_evictable,
)
from .leases import Lease
from .snapshots import Snapshot, same_shape, snapshot
from .state import CacheState


class LeaseSnap(NamedTuple):
    """O(1) projection of a state for one lease call: the core's, plus the lease book's."""

    core: Snapshot
    live: int  # live leases in the book
    on_key: int  # live leases on the touched key
    held: bool  # the touched lease held its pin (False when no lease is touched)


class Old(Protocol):
    """icontract's OLD for the lease contracts."""

    pre: LeaseSnap
    due: int


def _lease_snap(s: CacheState, key: object, lease: object = None) -> LeaseSnap:
    book = s.leases
    counted = key if isinstance(key, str) else None
    return LeaseSnap(
        core=snapshot(s, counted),
        live=len(book.live),
        on_key=book.per_key.get(counted, 0) if counted is not None else 0,
        held=isinstance(lease, Lease) and lease._held,
    )


def _snap_key(s: CacheState, key: str) -> LeaseSnap:
    return _lease_snap(s, key)


def _snap_lease(s: CacheState, lease: Lease) -> LeaseSnap:
    return _lease_snap(s, getattr(lease, "key", None), lease)


def _book_grew(OLD: Old, s: CacheState, key: str, by: int) -> bool:
    book = s.leases
    return len(book.live) == OLD.pre.live + by and book.per_key.get(key, 0) == OLD.pre.on_key + by


# ---------------------------------------------------------------- lease


def lease_none_iff_absent(OLD: Old, result: Lease | None) -> bool:
    """None exactly when the key had no entry."""
    return (result is None) == (OLD.pre.core.pin is None)


def lease_counts_its_pin(
    OLD: Old, s: CacheState, key: str, seconds: float, now: float, result: Lease | None
) -> bool:
    """A held lease adds one pin and one live lease on its key, due at now + seconds;
    otherwise no pin and no lease is added."""
    if result is None or not result._held:
        return _book_grew(OLD, s, key, 0) and (
            OLD.pre.core.pin is None or s.entries[key]._pin_count == OLD.pre.core.pin
        )
    return (
        OLD.pre.core.pin is not None
        and OLD.pre.core.pin >= 0
        and s.entries[key]._pin_count == OLD.pre.core.pin + 1
        and _book_grew(OLD, s, key, 1)
        and result._deadline == now + float(seconds)
    )


def lease_leaves_evictable(OLD: Old, s: CacheState, key: str, result: Lease | None) -> bool:
    """A held lease's entry leaves the evictable set iff it was ready+unpinned."""
    if result is None or not result._held:
        return same_shape(snapshot(s), OLD.pre.core)
    return left_set_iff_was_evictable(
        OLD.pre.core.pin, OLD.pre.core.evictable_len, s, key
    ) and uncounted_iff_was_evictable(OLD.pre.core.pin, OLD.pre.core.evictable, s, key)


def blocks_and_entries_unchanged(OLD: Old, s: CacheState) -> bool:
    """No block moved and no entry came or went."""
    return len(s.free) == OLD.pre.core.free_len and len(s.entries) == OLD.pre.core.entries_len


lease_contract = contract(
    pre(evictable_within_entries, "EvictableSetInv"),
    snap(_snap_key, "pre"),
    post(lease_none_iff_absent, "TypeOK"),
    post(lease_counts_its_pin, "LeasePinsInv"),
    post(lease_leaves_evictable, "EvictableSetInv"),
    post(blocks_and_entries_unchanged, "BlockConservationInv"),
)


# ---------------------------------------------------------------- renew


def renew_iff_held(OLD: Old, result: bool) -> bool:
    """True exactly when the lease held its pin."""
    return result == OLD.pre.held


def renew_moves_only_the_deadline(
    OLD: Old, s: CacheState, lease: Lease, seconds: float, now: float, result: bool
) -> bool:
    """No pin, lease or block changes; a renewed lease is due at now + seconds."""
    unchanged = same_shape(snapshot(s), OLD.pre.core) and len(s.leases.live) == OLD.pre.live
    return unchanged and (not result or lease._deadline == now + float(seconds))


renew_contract = contract(
    snap(_snap_lease, "pre"),
    post(renew_iff_held, "LeasePinsInv"),
    post(renew_moves_only_the_deadline, "LeasePinsInv"),
)


# ---------------------------------------------------------------- release


def release_iff_held(OLD: Old, lease: Lease, result: bool) -> bool:
    """True exactly when the lease held its pin; afterwards it holds none."""
    return result == OLD.pre.held and not lease._held


def release_drops_one_pin(OLD: Old, s: CacheState, lease: Lease, result: bool) -> bool:
    """A release drops exactly one pin and one live lease of its key; else nothing changes."""
    if not result:
        return same_shape(snapshot(s), OLD.pre.core) and len(s.leases.live) == OLD.pre.live
    entry = s.entries.get(lease.key)
    return (
        entry is not None
        and OLD.pre.core.pin is not None
        and entry._pin_count == OLD.pre.core.pin - 1
        and _book_grew(OLD, s, lease.key, -1)
    )


def release_rejoins_last(OLD: Old, s: CacheState, lease: Lease, result: bool) -> bool:
    """The last pin's release makes the entry evictable again, counted (the policy's release)."""
    entry = s.entries.get(lease.key)
    if not result or entry is None or entry._pin_count != 0:
        return s.evictable_blocks == OLD.pre.core.evictable
    return (
        lease.key in s.policy
        and s.hooks.evictable_count() == OLD.pre.core.evictable_len + 1
        and s.evictable_blocks == OLD.pre.core.evictable + len(entry.block_ids)
    )


release_contract = contract(
    snap(_snap_lease, "pre"),
    post(release_iff_held, "LeasePinsInv"),
    post(release_drops_one_pin, "LeasePinsInv"),
    post(release_rejoins_last, "EvictableSetInv"),
    post(blocks_and_entries_unchanged, "BlockConservationInv"),
)


# ---------------------------------------------------------------- expire


def _due(s: CacheState, now: float) -> int:
    """How many live leases are due at ``now``: O(1) when the heap's first pair is not due."""
    heap = s.leases.heap
    if not heap or heap[0][0] >= now:
        return 0
    return sum(
        1 for held in s.leases.live.values() if held._deadline is not None and held._deadline < now
    )


def _snap_all(s: CacheState) -> LeaseSnap:
    return _lease_snap(s, None)


def expire_leaves_none_due(s: CacheState, now: float) -> bool:
    """After the pass no live lease is past its deadline (every pair left is >= now)."""
    heap = s.leases.heap
    return (not heap or heap[0][0] >= now) and s.leases.now == now


def expire_only_due(OLD: Old, s: CacheState, result: list[str]) -> bool:
    """Exactly the due leases were released, no other: one live lease fewer per key returned."""
    return len(result) == OLD.due and len(s.leases.live) == OLD.pre.live - OLD.due


def expire_rejoins_released(OLD: Old, s: CacheState, result: list[str]) -> bool:
    """Each entry whose last pin expired rejoined the evictable set, counted (the policy's
    release hook ran), and no other entry joined or left."""
    rejoined = [key for key in set(result) if s.entries[key]._pin_count == 0]
    blocks = sum(len(s.entries[key].block_ids) for key in rejoined)
    return (
        all(key in s.policy for key in rejoined)
        and s.hooks.evictable_count() == OLD.pre.core.evictable_len + len(rejoined)
        and s.evictable_blocks == OLD.pre.core.evictable + blocks
    )


expire_contract = contract(
    snap(_snap_all, "pre"),
    snap(_due, "due"),
    post(expire_leaves_none_due, "LeaseDeadlineInv"),
    post(expire_only_due, "ExpireOnlyDueProp"),
    post(expire_rejoins_released, "EvictableSetInv"),
    post(blocks_and_entries_unchanged, "BlockConservationInv"),
)

__all__: list[Any] = [
    "expire_contract",
    "lease_contract",
    "release_contract",
    "renew_contract",
]
