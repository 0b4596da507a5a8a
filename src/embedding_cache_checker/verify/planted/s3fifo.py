"""Planted bugs of s3fifo's order rule (S drained first; a used S head moves to M, cleared).

NEVER used by the cache. Each class overrides one method of the real policy
with one plausible mistake in its order rule (``planted.bug.PlantedPolicy``
says why no class adds a field); ``BUGS`` holds their catalogue entries.
"""

from __future__ import annotations

import sys

from embedding_cache.policies import S3FifoPolicy
from embedding_cache.policies.s3fifo import MAIN, SMALL

from .bug import ORDER, READY_ABC, Call, PlantedBug, PlantedPolicy, policy_bug


def _drains_small(policy: S3FifoPolicy) -> bool:
    """The S3-FIFO loop looks at S now (S holds its target, or M has nothing). O(1)."""
    return bool(policy.small) and (policy.small_blocks >= policy.small_target or not policy.main)


class S3FifoNeverPromotes(PlantedPolicy, S3FifoPolicy):
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


class S3FifoPromoteKeepsCount(PlantedPolicy, S3FifoPolicy):
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


class S3FifoMainFirst(PlantedPolicy, S3FifoPolicy):
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


class S3FifoHoldSmallOnly(PlantedPolicy, S3FifoPolicy):
    """PLANTED BUG (S3FifoHoldSmallOnly): the first pin takes the key out of S only, so a
    pinned key of M stays queued (and can be evicted)."""

    __slots__ = ()

    def hold(self, key: str) -> None:
        """O(1)."""
        if self.home[key] == SMALL:  # the bug: M's keys must leave their queue too
            super().hold(key)


class S3FifoIgnoresGhost(PlantedPolicy, S3FifoPolicy):
    """PLANTED BUG (S3FifoIgnoresGhost): a key back from G enters S, not M (the ghost's
    verdict is dropped with the key)."""

    __slots__ = ()

    def admit(self, key: str, size: int) -> None:
        """O(1)."""
        super().admit(key, size)  # drops the key from G and homes it in M ...
        self.home[key] = SMALL  # ... the bug: homed in S all the same


#: s3fifo: "a" used once and back in S's head, then "b" and "c" behind it; alloc "d".
USED_SMALL_HEAD: tuple[Call, ...] = (
    ("alloc", "a", 1), ("mark_ready", "a"), ("pin", "a"), ("unpin", "a"),
    ("alloc", "b", 1), ("mark_ready", "b"), ("alloc", "c", 1), ("mark_ready", "c"),
    ("alloc", "d", 1),
)  # fmt: skip


#: The s3fifo policy's planted bugs (catalogue entries).
BUGS: tuple[PlantedBug, ...] = (
    policy_bug(
        "S3FifoNeverPromotes", S3FifoNeverPromotes,
        (ORDER,), USED_SMALL_HEAD,
    ),
    policy_bug(
        "S3FifoPromoteKeepsCount", S3FifoPromoteKeepsCount,
        (ORDER,), USED_SMALL_HEAD,
    ),
    policy_bug(
        "S3FifoMainFirst", S3FifoMainFirst,
        (ORDER,), (*USED_SMALL_HEAD, ("mark_ready", "d"), ("alloc", "e", 1)),
        "MCBugS3FifoMainFirst",
    ),
    policy_bug(
        "S3FifoHoldSmallOnly", S3FifoHoldSmallOnly,
        ("EvictableSetInv",), (*USED_SMALL_HEAD, ("pin", "a")),
        "MCBugS3FifoHoldSmallOnly",
    ),
    policy_bug(
        "S3FifoIgnoresGhost", S3FifoIgnoresGhost,
        (), (*READY_ABC, ("alloc", "d", 1), ("alloc", "a", 1)),
        why_blind="no contract states where admit homes a key: the policy interface has no "
        "verification method for admit, and joined_ok checks the key's own home",
    ),
)  # fmt: skip
