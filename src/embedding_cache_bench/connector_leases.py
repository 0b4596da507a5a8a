"""The leases side of ``bench --connector``: a fake clock, the lease calls, the dead reader.

Until the running build has ``EmbeddingCache.lease`` (``leases_available``),
``connector`` runs without its ``lease`` order. Everything is on a fake clock
(``FakeClock``) that the bench advances by hand, so runs are deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, cast

from embedding_cache import EmbeddingCache

from . import workload

#: Fake-clock seconds that pass per request (and past a deadline, for the dead reader).
TICK_SECONDS = 0.01


class FakeClock:
    """A clock the bench advances by hand: ``clock()`` is ``now``."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Lease(Protocol):
    """The part of ``embedding_cache``'s ``Lease`` the bench uses."""

    @property
    def key(self) -> str: ...
    @property
    def block_ids(self) -> tuple[int, ...]: ...
    @property
    def ready(self) -> bool: ...
    @property
    def deadline(self) -> float | None: ...
    def release(self) -> bool: ...


class LeasingCache(workload.Cache, Protocol):
    """A cache with leases (``EmbeddingCache`` once the build has them)."""

    def lease(self, key: str, seconds: float) -> Lease | None: ...


def leases_available() -> bool:
    """True when the running build's ``EmbeddingCache`` has ``lease``. O(1)."""
    return hasattr(EmbeddingCache, "lease")


def make_cache(policy: str, num_blocks: int, clock: FakeClock) -> workload.Cache:
    """A fresh ``EmbeddingCache`` of ``policy``, on ``clock`` when the build has leases."""
    if leases_available():
        # The build's constructor takes clock= once leases are there.
        return cast(workload.Cache, EmbeddingCache(num_blocks, policy, clock=clock))  # type: ignore[call-arg, unused-ignore]
    return EmbeddingCache(num_blocks, policy)


def dead_reader(
    cache: LeasingCache, clock: FakeClock, keys: Sequence[str], seconds: float, n: int
) -> dict[str, Any]:
    """A reader leases the first ``n`` ready items of ``keys`` and dies (never releases).

    Every other pin is gone (the transfers were drained), so an entry pinned
    now is pinned by a lease. The clock reaches the leases' deadline (not due:
    still held) and one call runs; it passes the deadline and one call runs:
    the blocks still held each time. O(keys tried + n) cache calls.
    """
    leases: list[Lease] = []
    for key in keys:
        if len(leases) == n:
            break
        lease = cache.lease(key, seconds)
        if lease is not None and lease.ready:
            leases.append(lease)
    deadline = max((lease.deadline or clock.now for lease in leases), default=clock.now)

    def held() -> int:
        cache.has_held_entries()  # the one call: every public call expires due leases first
        return sum(
            len(entry.block_ids)
            for lease in leases
            if (entry := cache.get(lease.key)) is not None and entry.pin_count > 0
        )

    clock.now = deadline
    at_deadline = held()
    clock.now = deadline + TICK_SECONDS
    after = held()
    return {
        "leases": len(leases),
        "blocks_leased": sum(len(lease.block_ids) for lease in leases),
        "blocks_held_at_deadline": at_deadline,
        "blocks_held_after_deadline": after,
        "held_entries_after_deadline": cache.has_held_entries(),
    }
