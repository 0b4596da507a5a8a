"""fifo: the seed's policy. Evictable entries leave in the order they (last) became evictable.

``mark_ready`` and the unpin that reaches 0 append the key to the queue's
tail; the first pin removes it wherever it stands; ``evict`` pops the head.
Because a pinned entry leaves the queue and a released one goes to the back,
this is also LRU-on-release. TLA+: ``tla/`` policy module for fifo, order
property ``EvictOldestFirstProp`` (stated on a ghost clock there).
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

from .base import (
    EvictionPolicy,
    Hooks,
    MoreVictims,
    PolicyChecks,
    SizeOf,
    VictimPlan,
    take_in_order,
)


class FifoPolicy(EvictionPolicy):
    """FIFO by the time an entry last became evictable. Every operation O(1)."""

    name = "fifo"
    order_property = "EvictOldestFirstProp"

    __slots__ = ("queue",)

    def __init__(self, num_blocks: int = 0) -> None:
        #: Evictable key -> its block count, oldest first.  (TLA+: queue)
        self.queue: OrderedDict[str, int] = OrderedDict()

    def ready(self, key: str, size: int) -> None:
        """Append ``key`` at the tail. O(1)."""
        self.queue[key] = size

    def release(self, key: str, size: int) -> None:
        """Append ``key`` at the tail. O(1)."""
        self.queue[key] = size

    def hold(self, key: str) -> None:
        """Remove ``key`` wherever it stands. O(1)."""
        del self.queue[key]

    def evict(self) -> str:
        """Pop the head (the oldest). O(1)."""
        return self.queue.popitem(last=False)[0]

    def __len__(self) -> int:
        return len(self.queue)

    def __contains__(self, key: object) -> bool:
        return key in self.queue

    def evictable_keys(self) -> Iterable[str]:
        return self.queue.keys()

    def hooks(self) -> Hooks:
        """The OrderedDict's own C-level methods, so fifo costs what the seed did."""
        q = self.queue
        return Hooks(
            ready=q.__setitem__,
            release=q.__setitem__,
            hold=q.__delitem__,
            hit=None,
            admit=None,
            forget=None,
            evict=functools.partial(q.popitem, False),
            evictable_count=q.__len__,
        )


class FifoChecks(PolicyChecks[FifoPolicy]):
    """fifo's verification side: the victims and the joins by its rule (oldest first)."""

    __slots__ = ()

    def plan_victims(
        self, free: int, n: int, size_of: SizeOf, more: MoreVictims | None = None
    ) -> VictimPlan:
        """The shortest prefix of the queue whose blocks, with the free ones, reach n.

        O(victims): reads the queue from the head, evicts nothing.
        """
        keys = iter(self.policy.queue)
        victims, freed = take_in_order(keys, free, n, size_of, more)
        survivor = next(keys, None)
        return VictimPlan(tuple(victims), freed, survivor)

    def plan_holds(self, plan: VictimPlan) -> bool:
        """The queue's new head is the first entry the plan did not evict. O(1)."""
        return next(iter(self.policy.queue), None) == plan.expect

    def joined_ok(self, key: str, before: int) -> str | None:
        """``key`` is the queue's newest (its tail) and the queue grew by one. O(1)."""
        p = self.policy
        if len(p.queue) != before + 1:
            return f"the queue went from {before} to {len(p.queue)} keys, not +1"
        tail = next(reversed(p.queue), None)
        if tail != key:
            return f"{key!r} joined, but the newest queued key is {tail!r}"
        return None

    def abstract(self) -> dict[str, Any]:
        return {"queue": tuple(self.policy.queue)}

    def check(self, ready_sizes: Mapping[str, int], evictable: Mapping[str, int]) -> str | None:
        """EvictableSetInv: the queue holds exactly the evictable keys, with their sizes."""
        p = self.policy
        if p.queue.keys() != evictable.keys():
            extra = sorted(p.queue.keys() - evictable.keys())
            missing = sorted(evictable.keys() - p.queue.keys())
            return f"EvictableSetInv: queue has extra {extra}, lacks {missing}"
        for key, size in p.queue.items():
            if size != evictable[key]:
                held = evictable[key]
                return f"EvictableSetInv: queue says {size} blocks for {key!r}, entry holds {held}"
        return None

    def clone(self) -> FifoPolicy:
        twin = FifoPolicy()
        twin.queue = self.policy.queue.copy()
        return twin


FifoPolicy.checks_class = FifoChecks
