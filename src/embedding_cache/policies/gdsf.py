"""gdsf: GreedyDual-Size-Frequency, in integers. Evict the lowest frequency-per-block first.

Each ready entry has a use count ``freq`` (1 at ``mark_ready``, +1 per use,
capped at ``max_freq``). When an entry joins the evictable set its priority
is fixed at ``clock + scale * freq // max(size, 1)``; ``evict`` takes the
lowest priority (ties: the one that joined first) and raises ``clock`` to
the victim's priority, so entries that wait long enough age out however
often they were used (the "greedy dual" inflation). Small, often-used
entries stay; large, one-time entries go first, which is what raises hit
ratios for embeddings of 64 to thousands of blocks.

Integers, not floats, so that the TLA+ module computes the same priorities
(``scale`` and ``max_freq`` are that module's constants; the defaults keep
the integer division far finer than any real size difference).

Cost: ``ready``/``release`` O(log E) (a heap push), ``hold`` O(1) amortized
(the heap item is dropped lazily; the heap is rebuilt when stale items
outnumber live ones, O(E) once per E/2 holds), ``evict`` O(log E) amortized.
The log factor is the price of a priority order; E is the number of
evictable entries, not the pool size.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .base import EvictionPolicy, SizeOf, VictimPlan

#: Heap items: (priority, join sequence number, key).
_Item = tuple[int, int, str]


class GdsfPolicy(EvictionPolicy):
    """GreedyDual-Size-Frequency over the evictable entries (see the module docstring)."""

    name = "gdsf"
    order_property = "EvictLowestPriorityProp"

    __slots__ = ("_heap", "_seq", "clock", "freq", "max_freq", "members", "scale")

    def __init__(
        self, num_blocks: int = 0, *, scale: int = 1 << 32, max_freq: int = 1 << 16
    ) -> None:
        if scale < 1 or max_freq < 1:
            raise ValueError(f"gdsf: scale and max_freq must be >= 1, got {scale}, {max_freq}")
        self.scale = scale
        self.max_freq = max_freq
        #: The inflation value L: the priority of the last victim.  (TLA+: clock)
        self.clock = 0
        #: Ready live key -> its use count, 1 .. max_freq.  (TLA+: freq)
        self.freq: dict[str, int] = {}
        #: Evictable key -> its live heap item (priority, join sequence number, key).
        #: (TLA+: prio, order)
        self.members: dict[str, _Item] = {}
        self._heap: list[_Item] = []
        self._seq = 0

    def _join(self, key: str, size: int) -> None:
        seq = self._seq = self._seq + 1
        item = (self.clock + self.scale * self.freq[key] // (size if size > 1 else 1), seq, key)
        # The member's value is its heap item itself: evict recognises a live
        # item by identity, without building a tuple to compare.
        self.members[key] = item
        heapq.heappush(self._heap, item)

    def ready(self, key: str, size: int) -> None:
        """First use count 1; join with a fresh priority. O(log E)."""
        self.freq[key] = 1
        self._join(key, size)

    def release(self, key: str, size: int) -> None:
        """Rejoin with a priority from the current clock and use count. O(log E)."""
        self._join(key, size)

    def hit(self, key: str) -> None:
        """One more use, up to ``max_freq``. O(1)."""
        count = self.freq[key]
        if count < self.max_freq:
            self.freq[key] = count + 1

    def hold(self, key: str) -> None:
        """Leave the evictable set; the heap item goes stale. O(1) amortized."""
        members = self.members
        del members[key]
        if len(self._heap) > 2 * len(members) + 32:
            # Rebuild without stale items: O(E), at most once per E/2 holds.
            self._heap = list(members.values())
            heapq.heapify(self._heap)

    def evict(self) -> str:
        """Pop the lowest (priority, sequence); raise the clock to it. O(log E) amortized."""
        heap, members = self._heap, self.members
        while True:
            item = heapq.heappop(heap)
            key = item[2]
            if members.get(key) is item:
                del members[key]
                del self.freq[key]
                self.clock = item[0]
                return key

    def __len__(self) -> int:
        return len(self.members)

    def __contains__(self, key: object) -> bool:
        return key in self.members

    def evictable_keys(self) -> Iterable[str]:
        return self.members.keys()

    # ------------------------------------------------------------ verification

    def _ascending(self) -> Iterator[_Item]:
        """Live heap items in ascending order, without popping: a best-first walk of
        the heap array as a tree (children of i at 2i+1, 2i+2). O(k log k) for k items."""
        heap, members = self._heap, self.members
        frontier: list[tuple[_Item, int]] = [(heap[0], 0)] if heap else []
        while frontier:
            item, i = heapq.heappop(frontier)
            for child in (2 * i + 1, 2 * i + 2):
                if child < len(heap):
                    heapq.heappush(frontier, (heap[child], child))
            if members.get(item[2]) is item:
                yield item

    def plan_victims(self, free: int, n: int, size_of: SizeOf) -> VictimPlan:
        """Lowest priority first (earliest joined on ties) until free + freed >= n.

        Expect: the clock ends at the last victim's priority. O(k log k).
        """
        victims: list[str] = []
        freed = 0
        clock = self.clock
        items = self._ascending()
        while free + freed < n:
            item = next(items, None)
            if item is None:  # only when EvictableCountInv is already broken
                break
            victims.append(item[2])
            freed += size_of(item[2])
            clock = item[0]
        return VictimPlan(tuple(victims), freed, clock)

    def plan_holds(self, plan: VictimPlan) -> bool:
        """The clock is the last victim's priority (unchanged when none). O(1)."""
        return self.clock == plan.expect

    def joined_ok(self, key: str, before: int) -> str | None:
        """``key`` joined once, priced from the current clock and its use count. O(1)."""
        if len(self.members) != before + 1:
            return f"the evictable set went from {before} to {len(self.members)} keys, not +1"
        item = self.members.get(key)
        if item is None or item[1] != self._seq:
            return f"{key!r} is not the newest member of the evictable set"
        if item[0] < self.clock:
            return f"{key!r} joined at priority {item[0]}, below the clock {self.clock}"
        return None

    def abstract(self) -> dict[str, Any]:
        order = sorted(self.members, key=lambda k: self.members[k][1])
        return {
            "prio": {k: item[0] for k, item in self.members.items()},
            "freq": dict(self.freq),
            "order": tuple(order),
            "clock": self.clock,
        }

    def check(self, ready_sizes: Mapping[str, int], evictable: Mapping[str, int]) -> str | None:
        """EvictableSetInv (incl. the use counts' domain), PolicyTypeOK, ClockBelowPrioInv."""
        if self.members.keys() != evictable.keys():
            extra = sorted(self.members.keys() - evictable.keys())
            missing = sorted(evictable.keys() - self.members.keys())
            return f"EvictableSetInv: members have extra {extra}, lack {missing}"
        if self.freq.keys() != ready_sizes.keys():
            kept, ready = sorted(self.freq), sorted(ready_sizes)
            return f"EvictableSetInv: use counts kept for {kept}, ready keys {ready}"
        for key, count in self.freq.items():
            if not 1 <= count <= self.max_freq:
                return f"PolicyTypeOK: {key!r} has use count {count}, outside 1..{self.max_freq}"
        for key, item in self.members.items():
            if item[2] != key:
                return f"EvictableSetInv: {key!r} is recorded under the heap item of {item[2]!r}"
            if item[0] < self.clock:
                return f"ClockBelowPrioInv: {key!r} has priority {item[0]} < clock {self.clock}"
        heap_ids = {id(item) for item in self._heap}
        if any(id(item) not in heap_ids for item in self.members.values()):
            return "EvictableSetInv: an evictable key has no heap item"
        return None

    def clone(self) -> GdsfPolicy:
        twin = GdsfPolicy(scale=self.scale, max_freq=self.max_freq)
        twin.clock = self.clock
        twin.freq = dict(self.freq)
        twin.members = dict(self.members)
        twin._heap = list(self._heap)
        twin._seq = self._seq
        return twin
