"""Snapshots and expectations that the transitions' contracts compare.

Everything here is what a postcondition needs to say "what changed and what
did not" inductively: O(1) snapshots of the counters, and for ``alloc`` the
spec's choice of victims (in the running policy's order, only as many as
needed), computed by the policy's rule (``PolicyChecks.plan_victims``)
independently of the code that evicts. Nothing here grows with
``num_blocks``: an alloc's expectations cost O(n_blocks + victims' blocks).
The conditions that compare them, and each operation's contract, are in
``contracts``.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable
from typing import NamedTuple

from .policies import VictimPlan
from .run_seeker import RunSeeker
from .state import CacheState


class Snapshot(NamedTuple):
    """O(1) projection of a state, plus the touched key's entry (if any)."""

    free_len: int
    entries_len: int
    evictable_len: int  # how many keys the policy holds as evictable
    evictable: int  # the evictable-block counter
    pin: int | None  # the key's pin count; None when absent
    blocks: tuple[int, ...] | None  # the key's block ids; None when absent


def snapshot(s: CacheState, key: object = None) -> Snapshot:
    """Project ``s`` onto the numbers a transition may change. O(1)."""
    entry = s.entries.get(key) if isinstance(key, str) else None
    return Snapshot(
        free_len=len(s.free),
        entries_len=len(s.entries),
        evictable_len=s.hooks.evictable_count(),
        evictable=s.evictable_blocks,
        pin=None if entry is None else entry._pin_count,
        blocks=None if entry is None else entry.block_ids,
    )


def same_shape(a: Snapshot, b: Snapshot) -> bool:
    """True when the two snapshots agree on every counter."""
    return a[:4] == b[:4]


def as_count(n: object) -> int | None:
    """``n`` as alloc reads it (an int or anything with ``__index__``, not a bool,
    not negative), or None when alloc would raise for it."""
    if isinstance(n, bool):
        return None
    try:
        value = operator.index(n)  # type: ignore[arg-type]
    except TypeError:
        return None
    return value if value >= 0 else None


class AllocPlan(NamedTuple):
    """What the spec says a successful ``alloc`` must do, computed before it runs."""

    fails: bool  # free + evictable < n: the alloc must return None
    victims: VictimPlan  # the policy's victims, in eviction order
    taken: tuple[int, ...]  # the block ids this implementation hands out (see below)
    largest_victim: int  # the block count of the largest victim (0 when none)
    evicts: bool = False  # not short, and a victim would go: needed, or an extra one
    needed: int = 0  # how many of the victims are needed; the rest are contiguity's extras

    @property
    def victim_blocks(self) -> int:
        """The victims' total block count."""
        return self.victims.victim_blocks


def plan_alloc(s: CacheState, n: object) -> AllocPlan | None:
    """The victims of ``alloc(_, n)`` by the spec, and the blocks it will take.

    Victims: none when enough is free; else the policy's, by its rule
    (``plan_victims``; its order property, EvictOnlyAsNeededProp).
    Blocks taken: the free pool's own ``plan_take`` (the stack: each victim's
    blocks pushed, the top ``n`` taken, sorted; extents: the victims' runs
    merged in, then the fewest runs taken); the spec leaves the choice open,
    and any choice among free+victim blocks refines it.
    Returns None when ``n`` is not a well-formed count (the call will raise).
    O(n + victims' blocks).
    """
    count = as_count(n)
    if count is None:
        return None
    n = count
    free_len = len(s.free)
    if free_len + s.evictable_blocks < n:
        return AllocPlan(True, VictimPlan((), 0, None), (), 0)
    entries = s.entries
    # With enough free blocks the rule evicts nothing (plan_victims' loop does not
    # run), unless contiguity asks for victims beyond need.
    seeker = RunSeeker(s, n) if s.contiguity else None
    plan = s.checks.plan_victims(free_len, n, _sizer(s), seeker)
    needed = len(plan.victims) if seeker is None or seeker.needed is None else seeker.needed
    freed = [entries[key].block_ids for key in plan.victims]  # in eviction order
    largest = max(map(len, freed), default=0)
    # The alloc would evict (and an admission filter is asked, spec/SPEC.md section
    # 13.1): a needed victim, or under contiguity an extra one (no free run of n
    # while an entry is evictable; TLA+ WouldEvictUnder).
    evicts = free_len < n or bool(s.contiguity and s.evictable_count() and not s.free.has_run(n))
    return AllocPlan(False, plan, s.free.plan_take(n, freed), largest, evicts, needed)


def _sizer(s: CacheState) -> Callable[[str], int]:
    entries = s.entries

    def size_of(key: str) -> int:
        return len(entries[key].block_ids)

    return size_of


def canonical_ids(ids: object, n: int, num_blocks: int) -> bool:
    """True when ``ids`` is a tuple of ``n`` unique ascending ints in [0, num_blocks)."""
    if type(ids) is not tuple or len(ids) != n:
        return False
    return all(type(b) is int and 0 <= b < num_blocks for b in ids) and all(
        a < b for a, b in itertools.pairwise(ids)
    )


def just_freed(s: CacheState, ids: tuple[int, ...] | None) -> bool:
    """True when the free pool shows ``ids`` just given back (discard frees them).

    The stack: its top is exactly ``ids``; extents: every id is free. O(len(ids)).
    """
    return not ids or s.free.just_freed(ids)
