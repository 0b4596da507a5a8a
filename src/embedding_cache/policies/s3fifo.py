"""s3fifo: S3-FIFO (Yang et al., SOSP 2023), adapted to pinned entries.

Three FIFO queues: a small probationary queue S (about 10% of the pool, in
blocks), a main queue M, and a ghost queue G of recently evicted keys
(no blocks, only names). A new entry enters S, unless its key is in G (it
was evicted from S recently and came back), then it enters M. A use raises
the entry's counter ``freq`` (capped at 3). Eviction:

* while S holds at least its target in blocks (or M has nothing evictable),
  look at S's head: used since it entered S -> moved to M's tail with its
  counter cleared; never used -> evicted, its key remembered in G;
* otherwise look at M's head: used -> counter minus one and back to M's
  tail (a second chance); unused -> evicted.

One-time items (scans) pass through S without disturbing M: that is the
scan resistance. Pins: a pinned entry cannot be evicted, so the first pin
takes it out of its queue and the last unpin puts it back at its queue's
tail (``home`` remembers which). G is bounded in blocks by M's share of the
pool; a key weighs ``max(size, 1)`` there, so zero-block entries cannot grow
it without bound.

Cost: every hook O(1); ``evict`` O(1) amortized (each rotation spends one
unit of a counter that a use paid for, each promotion moves an entry out of
S for good).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .base import EvictionPolicy, MoreVictims, PolicyChecks, SizeOf, VictimPlan

#: Cap on the use counter (2 bits in the paper).
MAX_FREQ = 3
SMALL = "S"
MAIN = "M"


def small_target(num_blocks: int) -> int:
    """S's target size in blocks: 10% of the pool, at least 1."""
    return max(1, num_blocks // 10)


class S3FifoPolicy(EvictionPolicy):
    """S3-FIFO over the evictable entries (see the module docstring)."""

    name = "s3fifo"
    order_property = "EvictProbationFirstProp"

    __slots__ = (
        "freq",
        "ghost",
        "ghost_blocks",
        "ghost_capacity",
        "home",
        "main",
        "small",
        "small_blocks",
        "small_target",
    )

    def __init__(self, num_blocks: int = 0) -> None:
        self.small_target = small_target(num_blocks)
        self.ghost_capacity = max(0, num_blocks - self.small_target)
        #: Evictable keys homed in S -> size, oldest first.  (TLA+: small)
        self.small: OrderedDict[str, int] = OrderedDict()
        #: Evictable keys homed in M -> size, oldest first.  (TLA+: main)
        self.main: OrderedDict[str, int] = OrderedDict()
        self.small_blocks = 0
        #: Recently evicted keys -> weight, oldest first.  (TLA+: ghost)
        self.ghost: OrderedDict[str, int] = OrderedDict()
        self.ghost_blocks = 0
        #: Ready live key -> use counter 0..3.  (TLA+: freq)
        self.freq: dict[str, int] = {}
        #: Live key -> "S" or "M", the queue it belongs to.  (TLA+: home)
        self.home: dict[str, str] = {}

    # ------------------------------------------------------------ events

    def admit(self, key: str, size: int) -> None:
        """A key remembered in G enters M (and leaves G); any other enters S. O(1)."""
        weight = self.ghost.pop(key, None)
        if weight is None:
            self.home[key] = SMALL
        else:
            self.ghost_blocks -= weight
            self.home[key] = MAIN

    def forget(self, key: str) -> None:
        """A discarded (never ready) entry leaves no trace. O(1)."""
        del self.home[key]

    def _join(self, key: str, size: int) -> None:
        if self.home[key] == SMALL:
            self.small[key] = size
            self.small_blocks += size
        else:
            self.main[key] = size

    def ready(self, key: str, size: int) -> None:
        """Counter 0; join the tail of the home queue. O(1)."""
        self.freq[key] = 0
        self._join(key, size)

    def release(self, key: str, size: int) -> None:
        """Rejoin the tail of the home queue. O(1)."""
        self._join(key, size)

    def hit(self, key: str) -> None:
        """One more use, up to 3. O(1)."""
        count = self.freq[key]
        if count < MAX_FREQ:
            self.freq[key] = count + 1

    def hold(self, key: str) -> None:
        """Leave the home queue (the home is kept for the release). O(1)."""
        if self.home[key] == SMALL:
            self.small_blocks -= self.small.pop(key)
        else:
            del self.main[key]

    def evict(self) -> str:
        """Run the S3-FIFO loop until one entry is evicted. O(1) amortized."""
        small, main, freq = self.small, self.main, self.freq
        while True:
            if small and (self.small_blocks >= self.small_target or not main):
                key, size = small.popitem(last=False)
                self.small_blocks -= size
                if freq[key]:
                    freq[key] = 0  # promoted: its counter is cleared
                    self.home[key] = MAIN
                    main[key] = size
                    continue
                self.remember(key, size)
            else:
                key, size = main.popitem(last=False)
                count = freq[key]
                if count:
                    freq[key] = count - 1  # a second chance costs one use
                    main[key] = size
                    continue
            del freq[key]
            del self.home[key]
            return key

    def remember(self, key: str, size: int) -> None:
        """Put an entry evicted from S into G, trimming G's oldest keys to fit (evict's
        step; a checker building a state with a ghost calls it too). O(1) amortized."""
        weight = size if size > 1 else 1
        self.ghost[key] = weight
        self.ghost_blocks += weight
        while self.ghost_blocks > self.ghost_capacity:
            self.ghost_blocks -= self.ghost.popitem(last=False)[1]

    def __len__(self) -> int:
        return len(self.small) + len(self.main)

    def __contains__(self, key: object) -> bool:
        return key in self.small or key in self.main

    def evictable_keys(self) -> Iterable[str]:
        yield from self.small
        yield from self.main


class _Lazy:
    """A queue read from an iterator, with pushes to a local tail (for ``plan_victims``)."""

    __slots__ = ("_head", "_items", "_tail")

    def __init__(self, items: Iterator[tuple[str, int]]) -> None:
        self._items = items
        self._head: tuple[str, int] | None = next(items, None)
        self._tail: deque[tuple[str, int]] = deque()

    def empty(self) -> bool:
        return self._head is None and not self._tail

    def pop(self) -> tuple[str, int]:
        if self._head is not None:
            item = self._head
            self._head = next(self._items, None)
            return item
        return self._tail.popleft()

    def push(self, item: tuple[str, int]) -> None:
        self._tail.append(item)


class S3FifoChecks(PolicyChecks[S3FifoPolicy]):
    """s3fifo's verification side: the victims by the S3-FIFO loop, on lazy views of the queues."""

    __slots__ = ()

    def plan_victims(
        self, free: int, n: int, size_of: SizeOf, more: MoreVictims | None = None
    ) -> VictimPlan:
        """The victims by the rule in the module docstring, on a lazy model of the queues.

        S and M are read from their heads through iterators, and M's new tail
        is a local deque, so nothing is copied or changed: O(entries passed
        over). Expect: the (key, home, counter) of every entry passed over
        and kept.
        """
        p = self.policy
        small = _Lazy(iter(p.small.items()))
        main = _Lazy(iter(p.main.items()))
        counters: dict[str, int] = {}
        moved: dict[str, tuple[str, int]] = {}
        small_blocks = p.small_blocks
        victims: list[str] = []
        freed = 0
        while free + freed < n or (more is not None and more(victims)):
            if not small.empty() and (small_blocks >= p.small_target or main.empty()):
                key, size = small.pop()
                small_blocks -= size
                if counters.get(key, p.freq[key]):
                    counters[key] = 0
                    moved[key] = (MAIN, 0)
                    main.push((key, size))
                    continue
            elif not main.empty():
                key, size = main.pop()
                count = counters.get(key, p.freq[key])
                if count:
                    counters[key] = count - 1
                    moved[key] = (MAIN, count - 1)
                    main.push((key, size))
                    continue
            else:  # no victim left: contiguity's extras, or EvictableCountInv broken
                break
            moved.pop(key, None)
            victims.append(key)
            freed += size
        return VictimPlan(tuple(victims), freed, tuple(moved.items()))

    def plan_holds(self, plan: VictimPlan) -> bool:
        """Every entry the plan passed over and kept has the planned home and counter. O(k)."""
        p = self.policy
        moved = plan.expect
        assert isinstance(moved, tuple)
        return all(
            p.home.get(key) == home and p.freq.get(key) == count for key, (home, count) in moved
        )

    def joined_ok(self, key: str, before: int) -> str | None:
        """``key`` is the newest of its home queue and the queues grew by one. O(1)."""
        p = self.policy
        if len(self.policy) != before + 1:
            return f"the queues went from {before} to {len(self.policy)} keys, not +1"
        queue = p.small if p.home.get(key) == SMALL else p.main
        tail = next(reversed(queue), None)
        if tail != key:
            return f"{key!r} joined, but the newest key of its queue is {tail!r}"
        return None

    def abstract(self) -> dict[str, Any]:
        p = self.policy
        return {
            "small": tuple(p.small),
            "main": tuple(p.main),
            "ghost": tuple(p.ghost.items()),  # (key, weight) pairs, as TLA+ <<k, w>>
            "freq": dict(p.freq),
            "home": dict(p.home),
        }

    def check(self, ready_sizes: Mapping[str, int], evictable: Mapping[str, int]) -> str | None:
        """EvictableSetInv (homes, counters, the S block count, G), PolicyTypeOK."""
        p = self.policy
        if p.small.keys() & p.main.keys():
            return f"EvictableSetInv: {sorted(p.small.keys() & p.main.keys())} in both S and M"
        queued = p.small.keys() | p.main.keys()
        if queued != evictable.keys():
            return f"EvictableSetInv: queues hold {sorted(queued)}, evictable {sorted(evictable)}"
        if p.freq.keys() != ready_sizes.keys():
            kept, ready = sorted(p.freq), sorted(ready_sizes)
            return f"EvictableSetInv: counters kept for {kept}, ready keys {ready}"
        for key in p.small:
            if p.home.get(key) != SMALL:
                return f"EvictableSetInv: {key!r} is in S but homed in {p.home.get(key)}"
        for key in p.main:
            if p.home.get(key) != MAIN:
                return f"EvictableSetInv: {key!r} is in M but homed in {p.home.get(key)}"
        if any(not 0 <= c <= MAX_FREQ for c in p.freq.values()):
            return f"PolicyTypeOK: a counter is outside 0..{MAX_FREQ}: {p.freq}"
        if p.small_blocks != sum(p.small.values()):
            held = sum(p.small.values())
            return f"EvictableSetInv: small_blocks is {p.small_blocks}, S holds {held}"
        if p.ghost.keys() & p.home.keys():
            live = sorted(p.ghost.keys() & p.home.keys())
            return f"EvictableSetInv: live keys {live} are in G"
        if p.ghost_blocks != sum(p.ghost.values()) or p.ghost_blocks > p.ghost_capacity:
            return f"EvictableSetInv: G weighs {p.ghost_blocks}, capacity {p.ghost_capacity}"
        return None

    def clone(self) -> S3FifoPolicy:
        p = self.policy
        twin = S3FifoPolicy()
        twin.small_target, twin.ghost_capacity = p.small_target, p.ghost_capacity
        twin.small, twin.main = p.small.copy(), p.main.copy()
        twin.small_blocks = p.small_blocks
        twin.ghost, twin.ghost_blocks = p.ghost.copy(), p.ghost_blocks
        twin.freq, twin.home = dict(p.freq), dict(p.home)
        return twin


S3FifoPolicy.checks_class = S3FifoChecks
