"""The lease transitions: grant, renew, release and expire pin leases over a CacheState.

As in ``transitions``, each function validates first and raises a typed error
before changing anything, takes no lock (the cache holds its own) and wears
its contract in the checked build (``lease_contracts``). The clock is read by
the cache and passed in as ``now``, so these stay pure functions of their
arguments: what the checkers and the TLA+ actions (tla/leases/) need.
A lease's pin is an ordinary pin of its entry (``transitions.pin_step``: the
policy's hold and hit hooks run) and leaves through ``transitions.unpin_step``
(the release hook runs on the last pin), so leases change no policy.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from . import lease_contracts
from .errors import ForeignLeaseError
from .leases import Lease, LeaseOwner, lease_seconds
from .state import CacheState
from .transitions import bad_key_error, pin_step, unpin_step


@lease_contracts.lease_contract
def lease(
    s: CacheState, key: str, seconds: float, now: float, owner: LeaseOwner | None = None
) -> Lease | None:
    """Pin ``key`` until ``now + seconds`` if it is present and ready [Lease].

    Mirrors ``pin_if_ready``: None when the key is absent; a ``Lease`` with
    ``ready`` False, holding nothing, when it is not ready; else a held lease.
    O(log leases).

    Raises:
        TypeError: ``key`` is not a str, or ``seconds`` is not a number.
        ValueError: ``seconds`` is negative, NaN or infinite.
    """
    if not isinstance(key, str):
        raise bad_key_error(key, "lease")
    seconds = lease_seconds(seconds, "lease")
    entry = s.entries.get(key)
    if entry is None:
        return None
    book = s.leases
    lease_id = book.next_id
    book.next_id = lease_id + 1
    if entry._pin_count < 0:
        return Lease(owner, book, lease_id, key, entry.block_ids, None, entry.shape)
    deadline = now + seconds
    pin_step(s, key, entry)
    # The shape is copied as the block ids are: payload for the load, read by nothing here.
    granted = Lease(owner, book, lease_id, key, entry.block_ids, deadline, entry.shape)
    book.live[lease_id] = granted
    book.per_key[key] = book.per_key.get(key, 0) + 1
    heapq.heappush(book.heap, (deadline, lease_id))
    return granted


def own_lease(s: CacheState, lease: object, operation: str) -> Lease:
    """``lease`` if it is one this state's book granted; else the typed error. O(1)."""
    if not isinstance(lease, Lease):
        raise TypeError(f"EmbeddingCache.{operation}: expected a Lease, not {type(lease).__name__}")
    if lease._book is not s.leases:
        raise ForeignLeaseError(lease.key, operation)
    return lease


@lease_contracts.renew_contract
def renew_lease(s: CacheState, lease: Lease, seconds: float, now: float) -> bool:
    """Move a held lease's deadline to ``now + seconds`` [Renew].

    Returns False, changing nothing, when the lease no longer holds its pin
    (released, expired, or never held). The new deadline may be earlier than
    the old one: it is what the caller asked for from now. O(log leases).

    Raises:
        TypeError: ``lease`` is not a Lease, or ``seconds`` is not a number.
        ForeignLeaseError: another cache granted ``lease`` (a ValueError).
        ValueError: ``seconds`` is negative, NaN or infinite.
    """
    held = own_lease(s, lease, "renew_lease")
    seconds = lease_seconds(seconds, "renew_lease")
    if not held._held:
        return False
    deadline = now + seconds
    held._deadline = deadline
    book = s.leases
    heapq.heappush(book.heap, (deadline, held._id))
    book.compact()
    return True


@lease_contracts.release_contract
def release_lease(s: CacheState, lease: Lease) -> bool:
    """Release a held lease's pin [Release]; False, changing nothing, if it holds none.

    A lease releases at most once, whoever ends it first (this call or
    expiry). O(1) amortized: its heap pair is left stale.

    Raises:
        TypeError: ``lease`` is not a Lease.
        ForeignLeaseError: another cache granted ``lease`` (a ValueError).
    """
    held = own_lease(s, lease, "release_lease")
    if not held._held:
        return False
    end_lease(s, held)
    s.leases.compact()
    return True


def end_lease(s: CacheState, held: Lease) -> None:
    """Drop a live lease and its pin [ReleaseStep]. O(1), plus the policy's release hook."""
    forget_lease(s, held)
    unpin_step(s, held.key, s.entries[held.key])


def forget_lease(s: CacheState, held: Lease) -> None:
    """Take a live lease off the book (not its pin: ``end_lease`` does both). O(1)."""
    book = s.leases
    del book.live[held._id]
    held._held = False
    left = book.per_key[held.key] - 1
    if left:
        book.per_key[held.key] = left
    else:
        del book.per_key[held.key]


@lease_contracts.expire_contract
def expire_leases(s: CacheState, now: float) -> list[str]:
    """Release every lease that is due (``deadline < now``) [Expire]; their keys, by deadline.

    Records ``now`` as the last expiry time (LeaseDeadlineInv). O(1) when no
    pair in the heap is due; else O(log leases) per popped pair.
    """
    book = s.leases
    book.now = now
    heap = book.heap
    expired: list[str] = []
    while heap and heap[0][0] < now:
        deadline, lease_id = heapq.heappop(heap)
        held = book.live.get(lease_id)
        if held is not None and held._deadline == deadline:  # else a stale pair
            end_lease(s, held)
            expired.append(held.key)
    return expired


#: The lease transitions by name, as ``transitions.OPERATIONS`` lists the core's.
LEASE_OPERATIONS: dict[str, Callable[..., Any]] = {
    "lease": lease,
    "renew_lease": renew_lease,
    "release_lease": release_lease,
    "expire_leases": expire_leases,
}
