"""Planted bugs of the policies' order rules: broken subclasses of the real policies.

NEVER used by the cache. Each class overrides one method of a real policy
with one plausible mistake in its order rule; every other method -- the
verification half included (``plan_victims``, ``plan_holds``, ``joined_ok``,
``check``), which is written from the rule's text -- is the real one, so the
real transitions' contracts judge the broken behaviour. No class adds a field
(``__slots__ = ()``): a well-formed state's policy can be re-typed in place
(``PlantedBug.plant``), which is how CrossHair and the contract tests run one
broken step from a state the real policy built.

The catalogue entry of each (name, expected conditions, witness) is in
``planted/__init__.py``.
"""

from __future__ import annotations

import sys
from typing import Any, TypeVar, cast

from embedding_cache.policies import (
    EVICTION_POLICIES,
    EvictionPolicy,
    FifoPolicy,
    GdsfPolicy,
    Hooks,
    S3FifoPolicy,
)
from embedding_cache.policies.s3fifo import MAIN, SMALL


class _Planted(EvictionPolicy):
    """Base of the broken policies: ``clone`` keeps the broken class (replay branches states)."""

    __slots__ = ()

    def clone(self: _P) -> _P:
        """The real policy's clone, re-typed as this class. O(the real clone)."""
        real = next(c for c in type(self).__mro__ if c in _REAL)
        twin: Any = real.clone(self)
        twin.__class__ = type(self)
        return cast(_P, twin)


_REAL = frozenset(EVICTION_POLICIES.values())
_P = TypeVar("_P", bound=EvictionPolicy)

# ---------------------------------------------------------------- fifo


class FifoEvictNewest(_Planted, FifoPolicy):
    """PLANTED BUG (EvictNewest): ``evict`` pops the queue's tail (the newest), not its head."""

    __slots__ = ()

    def evict(self) -> str:
        """O(1)."""
        return self.queue.popitem(last=True)[0]  # the bug: last=False

    def hooks(self) -> Hooks:
        """The Python-level hooks (FifoPolicy's C-level ones would bypass the override)."""
        return EvictionPolicy.hooks(self)


class FifoInsertAtHead(_Planted, FifoPolicy):
    """PLANTED BUG (FifoInsertAtHead): ``ready`` and ``release`` put the key at the queue's
    head, so the newest evictable entry is evicted first (tla/: the fifo bug model)."""

    __slots__ = ()

    def ready(self, key: str, size: int) -> None:
        """O(1)."""
        self.queue[key] = size
        self.queue.move_to_end(key, last=False)  # the bug: the head, not the tail

    def release(self, key: str, size: int) -> None:
        """O(1)."""
        self.ready(key, size)

    def hooks(self) -> Hooks:
        """The Python-level hooks (FifoPolicy's C-level ones would bypass the override)."""
        return EvictionPolicy.hooks(self)


# ---------------------------------------------------------------- gdsf


class GdsfEvictHighest(_Planted, GdsfPolicy):
    """PLANTED BUG (GdsfEvictHighest): ``evict`` takes the highest priority, not the lowest."""

    __slots__ = ()

    def evict(self) -> str:
        """O(E). (The victim's heap item goes stale, as after a hold.)"""
        members = self.members
        key = max(members, key=members.__getitem__)  # the bug: max, not min
        self.clock = members.pop(key)[0]
        del self.freq[key]
        return key


class GdsfEvictFirstJoined(_Planted, GdsfPolicy):
    """PLANTED BUG (GdsfEvictFirstJoined): ``evict`` takes the entry that joined first,
    ignoring priorities (tla/: the gdsf bug model of the same name)."""

    __slots__ = ()

    def evict(self) -> str:
        """O(1). (Members are kept in join order; the victim's heap item goes stale.)"""
        key = next(iter(self.members))  # the bug: the lowest priority, not the first joined
        self.clock = self.members.pop(key)[0]
        del self.freq[key]
        return key


class GdsfHoldKeepsOrder(_Planted, GdsfPolicy):
    """PLANTED BUG (GdsfHoldKeepsOrder): the first pin leaves the key among the evictable
    members, so a pinned entry can be chosen as a victim."""

    __slots__ = ()

    def hold(self, key: str) -> None:
        """O(1)."""
        # the bug: del self.members[key] is missing


class GdsfForgetsClock(_Planted, GdsfPolicy):
    """PLANTED BUG (GdsfForgetsClock): ``evict`` never raises the clock, so entries that
    waited are never aged (the "greedy dual" inflation is lost)."""

    __slots__ = ()

    def evict(self) -> str:
        """O(log E) amortized."""
        clock = self.clock
        key = super().evict()
        self.clock = clock  # the bug: the clock must become the victim's priority
        return key


class GdsfJoinIgnoresClock(_Planted, GdsfPolicy):
    """PLANTED BUG (GdsfJoinIgnoresClock): a joining entry is priced without the clock,
    so after any eviction it ranks below entries that waited."""

    __slots__ = ()

    def _join(self, key: str, size: int) -> None:
        clock, self.clock = self.clock, 0  # the bug: the price must start from the clock
        try:
            super()._join(key, size)
        finally:
            self.clock = clock


class GdsfIgnoresHits(_Planted, GdsfPolicy):
    """PLANTED BUG (GdsfIgnoresHits): uses are not counted; every entry keeps use count 1
    (size-only GreedyDual)."""

    __slots__ = ()

    def hit(self, key: str) -> None:
        """O(1)."""
        # the bug: self.freq[key] = min(self.freq[key] + 1, self.max_freq) is missing


# ---------------------------------------------------------------- s3fifo


def _drains_small(policy: S3FifoPolicy) -> bool:
    """The S3-FIFO loop looks at S now (S holds its target, or M has nothing). O(1)."""
    return bool(policy.small) and (policy.small_blocks >= policy.small_target or not policy.main)


class S3FifoNeverPromotes(_Planted, S3FifoPolicy):
    """PLANTED BUG (S3FifoNeverPromotes): S's head is evicted even when it was used; it
    should move to M (so a reused entry is evicted like a one-time one)."""

    __slots__ = ()

    def evict(self) -> str:
        """O(1) amortized."""
        if _drains_small(self):
            key, size = self.small.popitem(last=False)
            self.small_blocks -= size
            # the bug: no "if freq[key]: move it to M's tail, counter cleared" first
            self._remember(key, size)
            del self.freq[key]
            del self.home[key]
            return key
        return super().evict()  # M's turn: the real loop stays in M


class S3FifoPromoteKeepsCount(_Planted, S3FifoPolicy):
    """PLANTED BUG (S3FifoPromoteKeepsCount): a used entry moved from S to M keeps its
    counter, so it gets second chances in M it never earned there."""

    __slots__ = ()

    def evict(self) -> str:
        """O(1) amortized."""
        while _drains_small(self):
            key = next(iter(self.small))
            if not self.freq[key]:
                break
            size = self.small.pop(key)
            self.small_blocks -= size
            self.home[key] = MAIN  # the bug: self.freq[key] = 0 is missing
            self.main[key] = size
        return super().evict()  # S's head is unused now, or it is M's turn


class S3FifoMainFirst(_Planted, S3FifoPolicy):
    """PLANTED BUG (S3FifoMainFirst): the loop takes from S only when M is empty, so keys
    that earned their place in M go before one-hit wonders in S (no scan resistance)."""

    __slots__ = ()

    def evict(self) -> str:
        """O(1) amortized."""
        target, self.small_target = self.small_target, sys.maxsize  # the bug: S never "full"
        try:
            return super().evict()
        finally:
            self.small_target = target


class S3FifoHoldSmallOnly(_Planted, S3FifoPolicy):
    """PLANTED BUG (S3FifoHoldSmallOnly): the first pin takes the key out of S only, so a
    pinned key of M stays queued (and can be evicted)."""

    __slots__ = ()

    def hold(self, key: str) -> None:
        """O(1)."""
        if self.home[key] == SMALL:  # the bug: M's keys must leave their queue too
            super().hold(key)


class S3FifoIgnoresGhost(_Planted, S3FifoPolicy):
    """PLANTED BUG (S3FifoIgnoresGhost): a key back from G enters S, not M (the ghost's
    verdict is dropped with the key)."""

    __slots__ = ()

    def admit(self, key: str, size: int) -> None:
        """O(1)."""
        super().admit(key, size)  # drops the key from G and homes it in M ...
        self.home[key] = SMALL  # ... the bug: homed in S all the same
