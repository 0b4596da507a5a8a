"""s3fifo's checker side: a home (S or M) per live entry, a counter per ready entry,
and a ghost, as CrossHair choices.

Layout (``MAX_ENTRIES`` = n): per entry i its home (0: S, 1: M), then per entry
its counter (0..MAX_FREQ); then the number of ghost keys and each one's size.
S and M list their evictable keys in key order; the ghost keys (``g0``, ...)
are remembered oldest first and trimmed to the ghost's capacity as the real
policy trims them.
"""

from __future__ import annotations

from collections.abc import Sequence

from embedding_cache.policies import EvictionPolicy, S3FifoPolicy
from embedding_cache.policies.s3fifo import MAIN, MAX_FREQ, SMALL

from .base import MAX_BLOCKS, MAX_ENTRIES, Bound, Entries, PolicyAdapter, pad

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
            policy._remember(GHOST_KEYS[j], sizes[j])  # trims the oldest past capacity
    for i, (key, size, pin) in enumerate(entries):
        policy.home[key] = MAIN if homes[i] else SMALL
        if pin >= 0:
            policy.freq[key] = counters[i]
        if pin == 0:
            policy._join(key, size)


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
