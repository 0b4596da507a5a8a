"""Planted bugs of density's order rule (lowest use density first; counts kept in a
history; periodic halving).

NEVER used by the cache. Each class overrides one method of the real policy
with one plausible mistake in its order rule (``planted.bug.PlantedPolicy``
says why no class adds a field); ``BUGS`` holds their catalogue entries.

The same file holds ``ADAPTER``, how CrossHair builds this policy's states
(``embedding_cache_checker.policies.adapter``): a policy's checker side is one
file. density's checker side: the ticks, a use count per live entry, and a
history of remembered keys with their counts, as CrossHair choices.

Layout (``MAX_ENTRIES`` = n): choice 0 is the ticks; then per entry i its use
count (1..max_count); then the number of history keys and each one's count.
The history keys (``h0``, ...) are remembered oldest first; the evictable
entries join in key order. Built states use ``DENSITY_SMALL`` (the planted
bugs' parameters), so densities tie and counts reach their cap within reach.

Besides: EvictLowestDensityProp stated on one step of the code (``density_order``), for
the replay: the rule's victims and joins (``order_kept``), and the use counts the
step's events give, as the TLA+ check module's ghosts give them.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from embedding_cache.policies import EvictionPolicy
from embedding_cache.policies.density import DensityPolicy

from ...policies.base import MAX_ENTRIES, Bound, Entries, PolicyAdapter, pad
from ..transition_properties import CodeTransition, evicted, order_kept
from .bug import ORDER, PlantedBug, PlantedPolicy, policy_bug


class DensityEvictHighest(PlantedPolicy, DensityPolicy):
    """PLANTED BUG (DensityEvictHighest): ``evict`` takes the highest density, not the
    lowest (tla/: the density bug model of the same name)."""

    __slots__ = ()

    def evict(self) -> str:
        """O(E). (The victim's heap item goes stale, as after a hold.)"""
        members = self.members
        key = max(members, key=lambda k: (members[k][0], -members[k][1]))  # the bug: max
        del members[key]
        self._remember(key, self.count.pop(key))
        return key


class DensityAdmitIgnoresHistory(PlantedPolicy, DensityPolicy):
    """PLANTED BUG (DensityAdmitIgnoresHistory): ``admit`` drops the key's remembered count,
    so a key that comes back restarts at count 1."""

    __slots__ = ()

    def admit(self, key: str, size: int) -> None:
        """O(1)."""
        self.history.pop(key, None)
        self.count[key] = 1  # the bug: the remembered count + 1, capped
        self._tick()


class DensityNeverAges(PlantedPolicy, DensityPolicy):
    """PLANTED BUG (DensityNeverAges): the ticks wrap but the counts never halve, so old
    popularity never fades."""

    __slots__ = ()

    def _age(self) -> None:
        """O(1)."""
        # the bug: every count should halve and every evictable entry be repriced


class DensityHoldKeepsMember(PlantedPolicy, DensityPolicy):
    """PLANTED BUG (DensityHoldKeepsMember): the first pin leaves the key among the
    evictable members, so a pinned entry can be chosen as a victim."""

    __slots__ = ()

    def hold(self, key: str) -> None:
        """O(1)."""
        # the bug: del self.members[key] is missing


class DensityHistoryKeepsLive(PlantedPolicy, DensityPolicy):
    """PLANTED BUG (DensityHistoryKeepsLive): ``admit`` reads the key's remembered count
    but leaves the key in the history while it is live."""

    __slots__ = ()

    def admit(self, key: str, size: int) -> None:
        """O(1)."""
        c = self.history.get(key, 0) + 1  # the bug: get, not pop
        self.count[key] = min(c, self.max_count)
        self._tick()


class DensityHistoryUnbounded(PlantedPolicy, DensityPolicy):
    """PLANTED BUG (DensityHistoryUnbounded): ``evict`` puts the victim's count into the
    history without cutting it to ``history_size`` keys (``forget`` still cuts), so it
    grows with every key ever evicted."""

    __slots__ = ()

    def evict(self) -> str:
        """O(log K) amortized."""
        bound, self.history_size = self.history_size, sys.maxsize  # the bug: no cut
        try:
            return super().evict()
        finally:
            self.history_size = bound


#: Small density parameters: densities tie and counts reach their cap within a few steps.
DENSITY_SMALL: Mapping[str, int] = {"scale": 4, "max_count": 3, "history_size": 2, "period": 4}

#: density: "a" admitted, discarded (its count remembered), admitted again.
COMES_BACK = (("alloc", "a", 1), ("discard", "a"), ("alloc", "a", 1))

_WHY_BLIND = (
    "no contract states the use counts or the history: the policy interface has no "
    "verification method for admit, hit or forget, and the prices are checked against "
    "the policy's own counts"
)

#: The density policy's planted bugs (catalogue entries).
BUGS: tuple[PlantedBug, ...] = (
    policy_bug(
        "DensityEvictHighest", DensityEvictHighest,
        (ORDER,),
        (("alloc", "a", 1), ("mark_ready", "a"), ("alloc", "b", 2), ("mark_ready", "b"),
         ("alloc", "c", 1)),
        "MCBugDensityEvictHighest", params=DENSITY_SMALL,
    ),
    policy_bug(
        "DensityHoldKeepsMember", DensityHoldKeepsMember,
        ("EvictableSetInv",), (("alloc", "a", 1), ("mark_ready", "a"), ("pin", "a")),
        "MCBugDensityHoldKeepsOrder", params=DENSITY_SMALL,
    ),
    policy_bug(
        "DensityAdmitIgnoresHistory", DensityAdmitIgnoresHistory,
        (), COMES_BACK,
        "MCBugDensityAdmitIgnoresHistory", params=DENSITY_SMALL, why_blind=_WHY_BLIND,
    ),
    policy_bug(
        "DensityNeverAges", DensityNeverAges,
        (), (("alloc", "a", 1), ("mark_ready", "a"), ("pin", "a")),
        "MCBugDensityNeverAges", params={**DENSITY_SMALL, "period": 2}, why_blind=_WHY_BLIND,
    ),
    replace(
        policy_bug(
            "DensityHistoryKeepsLive", DensityHistoryKeepsLive,
            (ORDER, "EvictableSetInv"), COMES_BACK,
            "MCBugDensityHistoryKeepsLive", params=DENSITY_SMALL,
        ),
        blind=frozenset({"crosshair"}),
        why_blind="CrossHair allocs a fresh symbolic key: it must guess a built history "
        "key's name (h0, h1) for the admit to meet the history, and did not in its budget",
    ),
    policy_bug(
        "DensityHistoryUnbounded", DensityHistoryUnbounded,
        (ORDER, "EvictableSetInv"),
        (("alloc", "a", 3), ("mark_ready", "a"), ("alloc", "b", 3), ("mark_ready", "b"),
         ("alloc", "c", 3)),
        "MCBugDensityHistoryUnbounded", params={**DENSITY_SMALL, "history_size": 1},
    ),
)  # fmt: skip


#: Most history keys in a built state.
MAX_HISTORY = DENSITY_SMALL["history_size"]
#: The history keys of built states, oldest first.
HISTORY_KEYS = tuple(f"h{i}" for i in range(MAX_HISTORY))

_N = MAX_ENTRIES
_TICKS: Bound = (0, DENSITY_SMALL["period"] - 1)
_COUNT: Bound = (1, DENSITY_SMALL["max_count"])
_REMEMBERED: Bound = (0, MAX_HISTORY)


def _build(policy: EvictionPolicy, entries: Entries, choices: Sequence[int]) -> None:
    """The history, then every live entry's count, the evictable ones joining in key
    order, then the ticks. O(entries log entries + history)."""
    assert isinstance(policy, DensityPolicy)
    counts, remembered = choices[1 : 1 + _N], choices[1 + _N]
    history_counts = choices[2 + _N :]
    for j in range(MAX_HISTORY):
        if j < remembered:
            policy.count[HISTORY_KEYS[j]] = history_counts[j]
            policy.forget(HISTORY_KEYS[j])  # its count goes into the history
    for i, (key, _, _) in enumerate(entries):
        policy.count[key] = counts[i]
    for key, size, pin in entries:
        if pin == 0:
            policy.release(key, size)  # joins, priced by its count
    policy.ticks = choices[0]


def _listed(policy: EvictionPolicy) -> list[str]:
    """The evictable keys in join order (the abstract ``order``). O(entries log entries)."""
    assert isinstance(policy, DensityPolicy)
    return list(policy.checks().abstract()["order"])


def _preimage(
    policy: EvictionPolicy, order: Sequence[str], sizes: Sequence[int]
) -> tuple[list[int], dict[str, str]]:
    """The ticks, the counts, the history as it stands; its keys renamed h0, h1, ...
    O(entries + history)."""
    assert isinstance(policy, DensityPolicy)
    counts = pad([policy.count[k] for k in order], 1)
    history = list(policy.history.items())
    remembered = pad([c for _, c in history], 1, MAX_HISTORY)
    names = {key: HISTORY_KEYS[j] for j, (key, _) in enumerate(history)}
    return [policy.ticks, *counts, len(history), *remembered], names


def _remembered(history: list[list[Any]], key: str, count: int, bound: int) -> None:
    """``key`` leaves ``count`` in ``history`` (a list of [key, count], oldest first)."""
    history.append([key, count])
    del history[: max(0, len(history) - bound)]


#: A step's use counts: (count, history as [key, count] lists oldest first, ticks).
_Counts = tuple[dict[str, int], list[list[Any]], int]


def _admitted(step: CodeTransition, p: DensityPolicy, was: Mapping[str, Any]) -> _Counts:
    """An alloc that returned an entry: its victims, lowest (density, join order) first,
    remembered, then its key admitted (remembered count + 1, capped). O(entries)."""
    count: dict[str, int] = dict(was["count"])
    history = [[k, c] for k, c in was["history"]]
    place = {k: i for i, k in enumerate(was["order"])}
    sizes = {k: len(e.block_ids) for k, e in step.before.entries.items()}

    def rank(k: str) -> tuple[int, int]:
        return (p.scale * count[k] // max(sizes[k], 1), place.get(k, len(place)))

    for victim in sorted(evicted(step), key=rank):
        _remembered(history, victim, count.pop(victim), p.history_size)
    back = next((c for k, c in history if k == step.key), 0)
    history = [[k, c] for k, c in history if k != step.key]
    count[step.key] = min(p.max_count, int(back) + 1)
    return count, history, was["ticks"]


def _used(step: CodeTransition) -> bool:
    """A pin (or pin_if_ready) that took: a use. O(1)."""
    if step.op not in ("pin", "pin_if_ready") or step.error is not None:
        return False
    old, new = step.before.entries.get(step.key), step.after.entries.get(step.key)
    return old is not None and new is not None and new.pin_count > old.pin_count


def _ticked(counts: _Counts, period: int) -> _Counts:
    """One tick; the ``period``-th halves every count. O(entries + history)."""
    count, history, ticks = counts
    ticks += 1
    if ticks < period:
        return count, history, ticks
    halved = {k: max(1, c // 2) for k, c in count.items()}
    return halved, [[k, int(c) // 2] for k, c in history if int(c) // 2 > 0], 0


def density_counts(step: CodeTransition) -> str | None:
    """The counts, history and ticks after ``step``, from the ones before and the step's
    events alone (spec/policies/density.md): an alloc's victims are remembered and its
    key admitted, with a tick; a discard remembers its key; a use adds 1 (capped) with a
    tick; the ``period``-th tick halves every count. Written from the page, not from the
    policy's hooks. O(entries + history)."""
    p = step.after.policy
    if not isinstance(p, DensityPolicy):
        return None
    was, now = step.before.checks.abstract(), step.after.checks.abstract()
    counts: _Counts = (dict(was["count"]), [[k, c] for k, c in was["history"]], was["ticks"])
    if step.allocated:
        counts = _ticked(_admitted(step, p, was), p.period)
    elif step.op == "discard" and step.error is None and step.key in counts[0]:
        _remembered(counts[1], step.key, counts[0].pop(step.key), p.history_size)
    elif _used(step):
        counts[0][step.key] = min(p.max_count, counts[0][step.key] + 1)
        counts = _ticked(counts, p.period)
    count, history, ticks = counts
    want = (count, tuple((k, c) for k, c in history), ticks)
    got = (now["count"], now["history"], now["ticks"])
    if want != got:
        return f"counts, history, ticks are {got}; the events give {want}"
    return None


def density_order(step: CodeTransition) -> str | None:
    """EvictLowestDensityProp on one step of the code: the rule's victims and joins
    (``order_kept``), and the counts the events give (``density_counts``)."""
    return order_kept(step) or density_counts(step)


ADAPTER = PolicyAdapter(
    name=DensityPolicy.name,
    factory=partial(DensityPolicy, **DENSITY_SMALL),
    choice_bounds=(_TICKS, *[_COUNT] * _N, _REMEMBERED, *[_COUNT] * MAX_HISTORY),
    build=_build,
    listed=_listed,
    preimage=_preimage,
    transition_properties={DensityPolicy.order_property: density_order},
)
