"""sieve's checker side: the queue, a visited bit per queued entry, and the hand, as
CrossHair choices.

Layout (``MAX_ENTRIES`` = n): per entry i its visited bit (0..1; ignored for a
pinned entry, which is always visited), then the hand's position (0: none,
else 1 .. n). The queue is the ready entries (pin count 0 or more) in key
order, oldest first: any queue is one up to key names, so no order needs
choosing. A pinned ready entry is queued and marked pinned where it stands
(SIEVE never moves an entry for a pin); a not-ready entry is not queued. A
hand past the queue's end means none, as 0 does: the bound is static and the
queue's length is not, and so every choice builds a well-formed state (the
hand always a queued entry or none).
"""

from __future__ import annotations

from collections.abc import Sequence

from embedding_cache.policies import EvictionPolicy
from embedding_cache.policies.sieve import SievePolicy

from .base import MAX_ENTRIES, Bound, Entries, PolicyAdapter, pad

_N = MAX_ENTRIES
_VISITED: Bound = (0, 1)
_HAND: Bound = (0, MAX_ENTRIES)


def _build(policy: EvictionPolicy, entries: Entries, choices: Sequence[int]) -> None:
    """The ready entries join in key order, with their bits and pinned marks; then the
    hand. O(entries)."""
    assert isinstance(policy, SievePolicy)
    bits, hand = choices[:_N], choices[_N]
    queued: list[str] = []
    for i, (key, size, pin) in enumerate(entries):
        if pin < 0:
            continue  # not ready: never queued
        policy.ready(key, size)
        if pin > 0:
            # A pinned entry is visited: its first pin was a use, and the hand
            # passes a held entry without clearing its bit. (A pinned, unvisited
            # entry is unreachable: its release would break joined_ok.)
            policy.hold(key)
            policy.visited[key] = True
        else:
            # Bool, not the int choice: PolicyTypeOK wants a bool (a symbolic
            # int's truth value is a symbolic bool, so the solver branches here).
            policy.visited[key] = bool(bits[i])
        queued.append(key)
    # 0, or a position past the queue's end: none (start at the oldest).
    policy.hand = queued[hand - 1] if 0 < hand <= len(queued) else None


def _listed(policy: EvictionPolicy) -> list[str]:
    """Every queued key, pinned ones included, oldest first (the build's key order).
    O(queued)."""
    assert isinstance(policy, SievePolicy)
    return list(policy.checks().abstract()["queue"])


def _preimage(
    policy: EvictionPolicy, order: Sequence[str], sizes: Sequence[int]
) -> tuple[list[int], dict[str, str]]:
    """The bits of the keys in ``order`` (0 for a not-ready key), and the hand's
    position in the queue. No keys of its own. O(entries)."""
    assert isinstance(policy, SievePolicy)
    bits = pad([int(policy.visited.get(k, False)) for k in order], 0)
    hand = policy.checks().abstract()["hand"]
    return [*bits, hand], {}


ADAPTER = PolicyAdapter(
    name=SievePolicy.name,
    factory=SievePolicy,
    choice_bounds=(*[_VISITED] * _N, _HAND),
    build=_build,
    listed=_listed,
    preimage=_preimage,
)
