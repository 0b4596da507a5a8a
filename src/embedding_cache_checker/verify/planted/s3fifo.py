"""Planted bugs of s3fifo's order rule (S drained first; a used S head moves to M, cleared).

NEVER used by the cache. Each class overrides one method of the real policy
with one plausible mistake in its order rule (``planted.bug.PlantedPolicy``
says why no class adds a field); ``BUGS`` holds their catalogue entries.

The same file holds ``ADAPTER``, how CrossHair builds this policy's states
(``embedding_cache_checker.policies.adapter``): a policy's checker side is one
file. s3fifo's checker side: a home (S or M) per live entry, a counter per ready entry,
and a ghost, as CrossHair choices.

Layout (``MAX_ENTRIES`` = n): per entry i its home (0: S, 1: M), then per entry
its counter (0..MAX_FREQ); then the number of ghost keys and each one's size.
S and M list their evictable keys in key order; the ghost keys (``g0``, ...)
are remembered oldest first and trimmed to the ghost's capacity as the real
policy trims them.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from embedding_cache.policies import EvictionPolicy, S3FifoPolicy
from embedding_cache.policies.s3fifo import MAIN, MAX_FREQ, SMALL

from ...policies.base import MAX_BLOCKS, MAX_ENTRIES, Bound, Entries, PolicyAdapter, pad
from .bug import ORDER, READY_ABC, PlantedBug, PlantedPolicy, WitnessCall, policy_bug


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
            self.remember(key, size)
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
USED_SMALL_HEAD: tuple[WitnessCall, ...] = (
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


#: Most ghost keys in a built state (the ghost holds at most MAX_BLOCKS - 1 blocks).
MAX_GHOSTS = MAX_BLOCKS - 1
#: The ghost keys of built states, oldest first.
GHOST_KEYS = tuple(f"g{i}" for i in range(MAX_GHOSTS))

_N = MAX_ENTRIES
_HOME: Bound = (0, 1)
_COUNTER: Bound = (0, MAX_FREQ)
_GHOSTS: Bound = (0, MAX_GHOSTS)
_GHOST_SIZE: Bound = (0, MAX_BLOCKS)


def _build(policy: EvictionPolicy, entries: Entries, choices: Sequence[int]) -> None:
    """The ghost, then each entry's home and counter, the evictable ones joining in
    key order. O(entries + ghosts)."""
    assert isinstance(policy, S3FifoPolicy)
    homes, counters = choices[:_N], choices[_N : 2 * _N]
    ghosts, sizes = choices[2 * _N], choices[2 * _N + 1 :]
    for j in range(MAX_GHOSTS):
        if j < ghosts:
            policy.remember(GHOST_KEYS[j], sizes[j])  # trims the oldest past capacity
    for i, (key, size, pin) in enumerate(entries):
        policy.home[key] = MAIN if homes[i] else SMALL
        if pin >= 0:
            policy.freq[key] = counters[i]
        if pin == 0:
            policy.release(key, size)  # joins its home queue's tail


def _listed(policy: EvictionPolicy) -> list[str]:
    """S's evictable keys, then M's, each oldest first. O(entries)."""
    assert isinstance(policy, S3FifoPolicy)
    return [*policy.small, *policy.main]


def _preimage(
    policy: EvictionPolicy, order: Sequence[str], sizes: Sequence[int]
) -> tuple[list[int], dict[str, str]]:
    """Homes, counters and the ghost as it stands; its keys renamed g0, g1, ... O(entries)."""
    assert isinstance(policy, S3FifoPolicy)
    homes = pad([int(policy.home[k] == MAIN) for k in order], 0)
    counters = pad([policy.freq.get(k, 0) for k in order], 0)
    ghost = list(policy.ghost.items())
    weights = pad([w for _, w in ghost], 0, MAX_GHOSTS)
    names = {key: GHOST_KEYS[j] for j, (key, _) in enumerate(ghost)}
    return [*homes, *counters, len(ghost), *weights], names


ADAPTER = PolicyAdapter(
    name=S3FifoPolicy.name,
    factory=S3FifoPolicy,
    choice_bounds=(*[_HOME] * _N, *[_COUNTER] * _N, _GHOSTS, *[_GHOST_SIZE] * MAX_GHOSTS),
    build=_build,
    listed=_listed,
    preimage=_preimage,
)
