"""Admission filters: which allocs that would have to evict the cache declines.

Opt-in (``EmbeddingCache(n, admission="doorkeeper")``); ``admission=None``,
the default, is the seed's rule: an alloc fails only when free plus evictable
blocks are too few. With a filter an alloc that *would evict* (fewer than
``n`` blocks free, enough with the evictable ones; with contiguity, also no
free run of ``n`` while an entry is evictable, an extra victim's case) may also
be declined: it returns None and changes nothing in the cache. Every caller
already handles None (vLLM skips the save, or encodes locally). An alloc that
would evict nothing is never asked about. spec/SPEC.md section 13 is the rule;
tla/admission/ its TLA+ (AllocDeclinesOnlyWhenEvictingProp,
DoorkeeperRuleProp, DoorHoldsAbsentKeysInv).

``ADMISSION_FILTERS`` maps each name the cache accepts to its class.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, Literal, NamedTuple

#: What an alloc did, as a filter's rule judges it.
Outcome = Literal["admitted", "declined", "failed"]

#: Keys the doorkeeper remembers per block of the pool: its default capacity is
#: ``max(MIN_DOOR, num_blocks * DOOR_PER_BLOCK)``. A door about as long as the cache
#: holds entries admits what comes back soon; a longer one admits scans. Of the sizes
#: tried on ``bench --policies``' token-sized streams, pool/1024 came closest to the
#: offline reference (docs/MEASURED.md, "The doorkeeper's door size").
DOOR_PER_BLOCK = 1 / 1024
#: The smallest default door (small pools still remember a few keys).
MIN_DOOR = 8


class AdmissionFilter(ABC):
    """What the cache asks before an alloc that would evict, and tells after.

    The cache calls ``declines(key)`` only for an alloc that would evict (a
    needed victim, or with contiguity an extra one) and could; if it returns
    True the cache calls ``declined(key)`` and returns None. Every alloc that
    returns an entry calls ``admitted(key)``.
    Nothing else reaches the filter. Calls come with the cache's lock held.
    """

    __slots__ = ()

    #: The name ``EmbeddingCache(admission=...)`` takes.
    name: ClassVar[str]

    @abstractmethod
    def __init__(self, num_blocks: int) -> None:
        """Every filter is built from the pool's size (``ADMISSION_FILTERS[name](n)``)."""

    @abstractmethod
    def declines(self, key: str) -> bool:
        """Whether an alloc of ``key`` that would evict is declined (a query)."""

    @abstractmethod
    def declined(self, key: str) -> None:
        """The cache declined an alloc of ``key``."""

    @abstractmethod
    def admitted(self, key: str) -> None:
        """An alloc of ``key`` returned an entry."""

    @abstractmethod
    def abstract(self) -> tuple[str, ...]:
        """The filter's state as the spec sees it (the doorkeeper: its door, oldest first)."""

    @abstractmethod
    def copy(self) -> AdmissionFilter:
        """An independent copy (replay and the checker branch states with it)."""

    # The filter's verification side: what the checked build's alloc contract
    # compares (spec/SPEC.md section 13). A broken subclass inherits these, so
    # the real rule judges broken hooks.

    @abstractmethod
    def snapshot(self, key: str) -> Any:
        """What ``follows_rule`` needs of the state before an alloc of ``key`` (O(1))."""

    @abstractmethod
    def follows_rule(self, before: Any, key: str, evicts: bool, outcome: Outcome) -> str | None:
        """None if the alloc of ``key`` (``evicts``: it would have to evict and could)
        that ended in ``outcome`` followed the filter's rule, from ``before``
        (``snapshot``) to now; else what went wrong (O(1))."""

    @abstractmethod
    def check(self, live: Callable[[str], bool]) -> str | None:
        """None if the filter's state is well formed and holds no live key (``live``
        tells); else what is wrong. O(filter state)."""


class Doorkeeper(AdmissionFilter):
    """Decline a key's first request that would evict; let it in on its next.

    The door remembers the last ``capacity`` keys declined, oldest first (an
    insertion-ordered dict used as a bounded FIFO set). A key at the door is
    let in; a successful alloc takes its key off the door. So a key costs an
    eviction only when it is requested twice within ``capacity`` declines, and
    one-time items (scans) never push a cached entry out.

    Every operation is O(1) (amortized for ``declined``: one dict insert and at
    most one pop of the oldest key). Memory: one dict slot per remembered key.
    """

    __slots__ = ("_capacity", "_door")

    name: ClassVar[str] = "doorkeeper"

    def __init__(self, num_blocks: int, capacity: int | None = None) -> None:
        """A doorkeeper for a pool of ``num_blocks``; ``capacity`` keys at the door
        (default ``max(MIN_DOOR, num_blocks * DOOR_PER_BLOCK)``).

        Raises:
            TypeError: ``capacity`` is not an int (or is a bool).
            ValueError: ``capacity`` is below 1.
        """
        if capacity is None:
            capacity = max(MIN_DOOR, int(num_blocks * DOOR_PER_BLOCK))
        if isinstance(capacity, bool) or not isinstance(capacity, int):
            raise TypeError(f"Doorkeeper: capacity must be an int, not {type(capacity).__name__}")
        if capacity < 1:
            raise ValueError(f"Doorkeeper: capacity must be >= 1, got {capacity}")
        self._capacity = capacity
        self._door: dict[str, None] = {}

    @property
    def capacity(self) -> int:
        """How many declined keys the door remembers. O(1)."""
        return self._capacity

    def declines(self, key: str) -> bool:
        """True iff ``key`` is not at the door. O(1)."""
        return key not in self._door

    def declined(self, key: str) -> None:
        """``key`` joins the door as the newest; the oldest leaves if it is full. O(1)."""
        door = self._door
        door[key] = None
        if len(door) > self._capacity:
            del door[next(iter(door))]

    def admitted(self, key: str) -> None:
        """``key`` leaves the door, if it is there. O(1)."""
        self._door.pop(key, None)

    def abstract(self) -> tuple[str, ...]:
        """The door, oldest first (TLA+ ``door``). O(capacity)."""
        return tuple(self._door)

    def copy(self) -> Doorkeeper:
        """An independent copy. O(capacity)."""
        twin = Doorkeeper.__new__(Doorkeeper)
        twin._capacity = self._capacity
        twin._door = dict(self._door)
        return twin

    def __repr__(self) -> str:
        return f"Doorkeeper(capacity={self._capacity}, door={list(self._door)!r})"

    def snapshot(self, key: str) -> DoorSnapshot:
        """Whether ``key`` is at the door, the door's size and its oldest key. O(1)."""
        door = self._door
        return DoorSnapshot(key in door, len(door), next(iter(door), None))

    def follows_rule(
        self, before: DoorSnapshot, key: str, evicts: bool, outcome: Outcome
    ) -> str | None:
        """DoorkeeperRuleProp, from the door's ends and size (O(1)): an alloc that would
        evict is declined iff its key was not at the door; a decline puts the key at
        the door's newest end (the oldest leaves when it was full); an admitted key
        leaves the door; a short alloc leaves the door as it was."""
        door = self._door
        if evicts and outcome != "failed" and (outcome == "declined") == before.at_door:
            where = "at" if before.at_door else "not at"
            return f"an alloc of {key!r} that would evict was {outcome}, its key {where} the door"
        if outcome == "declined":
            size = min(before.size + 1, self._capacity)
            full = before.size == self._capacity
            if next(reversed(door), None) != key or len(door) != size:
                return f"declined {key!r} is not the door's newest key, or the door's size is wrong"
            if full and before.oldest in door:
                return f"the door was full and its oldest key {before.oldest!r} stayed"
        elif outcome == "admitted":
            if key in door or len(door) != before.size - before.at_door:
                return f"admitted {key!r} did not leave the door (alone)"
        elif len(door) != before.size or (key in door) != before.at_door:
            return f"a short alloc of {key!r} changed the door"
        return None

    def check(self, live: Callable[[str], bool]) -> str | None:
        """DoorHoldsAbsentKeysInv and the door's bound. O(capacity)."""
        if len(self._door) > self._capacity:
            return f"the door holds {len(self._door)} keys, over its capacity {self._capacity}"
        held = [key for key in self._door if live(key)]
        if held:
            return f"live keys at the door: {held[:5]!r}"
        return None


class DoorSnapshot(NamedTuple):
    """The door before an alloc, as ``Doorkeeper.follows_rule`` reads it."""

    at_door: bool  # the alloc's key was at the door
    size: int  # keys at the door
    oldest: str | None  # the oldest key at the door (None: empty)


#: Every admission filter by the name the cache takes.
ADMISSION_FILTERS: dict[str, type[AdmissionFilter]] = {Doorkeeper.name: Doorkeeper}

#: What ``admission=`` accepts: None (no filter: the seed's rule), a name in
#: ``ADMISSION_FILTERS``, or a callable taking ``num_blocks`` and returning a filter
#: (e.g. ``functools.partial(Doorkeeper, capacity=1000)``).
AdmissionSpec = str | Callable[[int], AdmissionFilter] | None


def make_admission(spec: AdmissionSpec, num_blocks: int) -> AdmissionFilter | None:
    """The filter ``spec`` names for a pool of ``num_blocks``, or None. O(1).

    Raises:
        TypeError: ``spec`` is neither None, a str nor a callable, or the callable
            did not return an ``AdmissionFilter``.
        ValueError: ``spec`` is an unknown name (the message lists the valid ones).
    """
    if spec is None:
        return None
    if isinstance(spec, str):
        try:
            cls = ADMISSION_FILTERS[spec]
        except KeyError:
            raise ValueError(
                f"EmbeddingCache: unknown admission filter {spec!r}; choose from "
                f"{', '.join(ADMISSION_FILTERS)} (or None)"
            ) from None
        return cls(num_blocks)
    if not callable(spec):
        raise TypeError(
            "EmbeddingCache: admission must be None, a name or a factory, "
            f"not {type(spec).__name__}"
        )
    made = spec(num_blocks)
    if not isinstance(made, AdmissionFilter):
        raise TypeError(
            f"EmbeddingCache: the admission factory returned {type(made).__name__}, "
            "not an AdmissionFilter"
        )
    return made
