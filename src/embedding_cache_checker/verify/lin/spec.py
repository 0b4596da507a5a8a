"""The sequential specification a history is checked against: the transitions, one at a time.

A model state is a fresh ``CacheState`` with the same policy, driven by the
real transition functions (``verification.REAL``) with no lock and no threads:
the cache's behaviour when calls never overlap. The policies are
deterministic, so the same calls in the same order give the same outcomes,
block ids included. States are never mutated once made (a step works on a
clone), so the checker can branch from any of them; each carries a hashable
fingerprint, and steps are memoised on (fingerprint, call).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import NamedTuple

from embedding_cache import invariants
from embedding_cache.policies import PolicySpec, make_policy
from embedding_cache.state import CacheState
from embedding_cache.verification import REAL

from ...abstraction import policy_view
from ..replay import clone
from .history import EntryView, Outcome, Raised, observe

#: Operations that change nothing: they run on the state itself, not a clone.
QUERIES = frozenset({"get", "has_held_entries", "len", "check"})


class Node(NamedTuple):
    """A model state and its fingerprint."""

    state: CacheState
    fingerprint: Hashable


def fingerprint(s: CacheState) -> Hashable:
    """Everything that decides the outcome of later calls, hashable. O(N + entries log entries).

    The free stack in order (it decides which ids an alloc takes), every entry
    with its pin count and block ids, the evictable-block counter, and the
    policy's variables (``EvictionPolicy.abstract``, which decides its victims).
    """
    return (
        tuple(s.free),
        tuple(sorted((k, e.pin_count, e.block_ids) for k, e in s.entries.items())),
        s.evictable_blocks,
        policy_view(s.checks.abstract()),
    )


def apply(s: CacheState, op: str, args: tuple[object, ...]) -> object:
    """Run operation ``op`` on ``s`` as the cache's method would, without the lock."""
    if op == "len":
        return len(s.entries)
    if op == "check":
        invariants.check(s)
        return None
    return getattr(REAL, op)(s, *args)


def agrees(seen: Outcome, spec: Outcome) -> bool:
    """Whether an observed outcome can be the specification's. O(blocks).

    Exact, except for an entry's ready flag: the caller reads it after the
    call returned, racing any concurrent ``mark_ready`` of that entry, so an
    entry the specification returned not-ready may be seen ready (never the
    other way round: an entry does not go back). The checker then requires
    that entry's ``mark_ready`` to have begun before the caller's read
    (``late_ready``).
    """
    return (seen == spec and type(seen) is type(spec)) or late_ready(seen, spec)


def late_ready(seen: Outcome, spec: Outcome) -> bool:
    """The entry the specification returned not-ready was seen ready. O(blocks)."""
    return (
        isinstance(seen, EntryView)
        and isinstance(spec, EntryView)
        and seen.block_ids == spec.block_ids
        and seen.ready
        and not spec.ready
    )


class SequentialSpec:
    """The cache run one call at a time from empty: the reference for one history.

    ``step`` is O(N + entries) the first time a (state, call) pair is seen
    (a clone, the transition, a fingerprint) and O(1) after.
    """

    def __init__(self, num_blocks: int, policy: PolicySpec = "fifo") -> None:
        state = CacheState(num_blocks, make_policy(policy, num_blocks))
        self.initial = Node(state, fingerprint(state))
        self._steps: dict[tuple[Hashable, str, tuple[object, ...]], tuple[Outcome, Node]] = {}

    def step(self, node: Node, op: str, args: tuple[object, ...]) -> tuple[Outcome, Node]:
        """The outcome of ``op(*args)`` in ``node`` and the node after it."""
        memo = (node.fingerprint, op, args)
        found = self._steps.get(memo)
        if found is not None:
            return found
        after = node
        state = node.state if op in QUERIES else clone(node.state)
        try:
            outcome = observe(apply(state, op, args))
        except Exception as exc:
            outcome = Raised(type(exc).__name__)
        else:
            if state is not node.state:
                after = Node(state, fingerprint(state))
        self._steps[memo] = (outcome, after)
        return outcome, after
