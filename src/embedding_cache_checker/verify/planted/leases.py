"""Planted bugs of the pin leases: broken copies of lease transitions, wearing the real contracts.

NEVER used by the cache. Each is a copy of one function of
``embedding_cache.lease_transitions`` with one plausible mistake, decorated
with that operation's own contract (``lease_contracts``), the same mistakes
as the TLA+ lease bug models (tla/leases/, linked by ``tla_model``): expiry
that skips the policy's release hook, a release after expiry that unpins
again, and expiry of a lease not yet due (at its deadline; or, with no TLA+
twin, through a renewed lease's stale heap pair). Shared bugs (every policy).
The state-graph replay drives lease calls (each policy's lease replay input,
``verify/lease_replay.py``) and catches the first three; trace validation
(the lease streams, ``workloads.drive_leases``, against
tla/trace/EmbeddingCacheLeaseTrace.tla), the contracts, the sweep and the
stateful test catch all four; CrossHair does not drive them (``WHY_BLIND``).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from embedding_cache.verification import (
    CacheState,
    Lease,
    end_lease,
    forget_lease,
    lease_contracts,
    lease_id,
    lease_transitions,
    own_lease,
    set_pin_count,
    unpin_step,
)

from .bug import LAYERS, PlantedBug, WitnessCall
from .core import _raises_like

#: Why the other layers are blind to lease bugs.
WHY_BLIND = (
    "the lease transitions are not CrossHair targets; the lease TLA+ bug models "
    "(tla/leases/) plant the same mistakes"
)

#: Why the replay is blind to ExpireNotDue.
WHY_REPLAY_BLIND = (
    "; the replay keeps one code state per spec state (the first path's), and a "
    "renewed lease's stale heap pair is code state with no spec counterpart: the "
    "first path to the renewed lease's spec state takes the lease with its final "
    "deadline, so the stale pair is never there"
)


@lease_contracts.expire_contract
def expire_leases_skips_release(s: CacheState, now: float) -> list[str]:
    """PLANTED BUG (ExpirySkipsRelease): a due lease's pin is dropped without the policy's
    release hook or the evictable count, so the entry's last pin leaves it ready,
    unpinned and never evictable."""
    book = s.leases
    book.now = now
    heap = book.heap
    expired: list[str] = []
    while heap and heap[0][0] < now:
        deadline, lease_id = heapq.heappop(heap)
        held = book.live.get(lease_id)
        if held is not None and held.deadline == deadline:
            forget_lease(s, held)
            entry = s.entries[held.key]
            set_pin_count(entry, entry.pin_count - 1)  # BUG: no unpin_step, no release hook
            expired.append(held.key)
    return expired


@lease_contracts.release_contract
@_raises_like(lease_transitions.release_lease)
def release_lease_unpins_again(s: CacheState, lease: Lease) -> bool:
    """PLANTED BUG (ReleaseAfterExpiryUnpins): a release asks whether the entry is pinned,
    not whether the lease still holds, so after expiry it takes another holder's pin."""
    held = own_lease(s, lease, "release_lease")  # the real check, unchanged
    entry = s.entries.get(held.key)
    if entry is None or entry.pin_count <= 0:
        return False
    if lease_id(held) in s.leases.live:
        end_lease(s, held)
    else:
        unpin_step(s, held.key, entry)  # BUG: the lease had ended
    return True


@lease_contracts.expire_contract
def expire_leases_not_due(s: CacheState, now: float) -> list[str]:
    """PLANTED BUG (ExpireNotDue): a renewed lease's old heap pair is taken for it, so the
    lease expires at its first deadline, before the renewed one."""
    book = s.leases
    book.now = now
    heap = book.heap
    expired: list[str] = []
    while heap and heap[0][0] < now:
        _, lease_id = heapq.heappop(heap)
        held = book.live.get(lease_id)
        if held is not None:  # BUG: no check that this pair is the lease's deadline
            end_lease(s, held)
            expired.append(held.key)
    return expired


@lease_contracts.expire_contract
def expire_leases_at_deadline(s: CacheState, now: float) -> list[str]:
    """PLANTED BUG (ExpireAtDeadline): a lease is taken as due at its deadline
    (``deadline <= now``), while the spec lets it hold until the clock is past it."""
    book = s.leases
    book.now = now
    heap = book.heap
    expired: list[str] = []
    while heap and heap[0][0] <= now:  # BUG: <= instead of <
        deadline, lease_id = heapq.heappop(heap)
        held = book.live.get(lease_id)
        if held is not None and held.deadline == deadline:
            end_lease(s, held)
            expired.append(held.key)
    return expired


def _lease_bug(
    name: str,
    body: Callable[..., Any],
    expect: tuple[str, ...],
    witness: tuple[WitnessCall, ...],
    tla: str | None,
    replay: bool = True,
) -> PlantedBug:
    caught = ("contracts", "stateful", "traces", "replay")[: 4 if replay else 3]
    return PlantedBug(
        name, None, "transition", witness[-1][0], frozenset(expect), tla, witness, 3, body=body,
        blind=frozenset(layer for layer in LAYERS if layer not in caught),
        why_blind=WHY_BLIND + ("" if replay else WHY_REPLAY_BLIND),
    )  # fmt: skip


#: A ready one-block entry 'a' with a lease due at 1 (the clock at 0).
LEASED_A: tuple[WitnessCall, ...] = (("alloc", "a", 1), ("mark_ready", "a"), ("lease", "a", 1))

#: The catalogue entries (``planted`` assembles them with the others).
BUGS: tuple[PlantedBug, ...] = (
    _lease_bug(
        "ExpirySkipsRelease", expire_leases_skips_release,
        ("EvictableSetInv", "EvictableCountInv"),
        (*LEASED_A, ("expire_leases", "", 2)), "MCBugLeaseExpireSkipsRelease",
    ),
    _lease_bug(
        "ReleaseAfterExpiryUnpins", release_lease_unpins_again,
        ("LeasePinsInv",),
        (*LEASED_A, ("pin", "a"), ("expire_leases", "", 2), ("release_lease", "a")),
        "MCBugLeaseReleaseAfterExpiry",
    ),
    _lease_bug(
        "ExpireNotDue", expire_leases_not_due,
        ("ExpireOnlyDueProp",),
        (*LEASED_A, ("renew_lease", "a", 5), ("expire_leases", "", 2)), None, replay=False,
    ),
    _lease_bug(
        "ExpireAtDeadline", expire_leases_at_deadline,
        ("ExpireOnlyDueProp",),
        (*LEASED_A, ("expire_leases", "", 1)), "MCBugLeaseExpireAtDeadline",
    ),
)  # fmt: skip
