"""Deliberately broken transitions: fixtures that show CrossHair's check is not vacuous.

NEVER used by the cache. Each function below is a copy of one transition in
``transitions`` with one plausible mistake, wrapped in that operation's own
contract (``contracts.<op>_contract``, the very decorator ``transitions``
applies), so CrossHair must find a state and arguments on which the mistake
breaks a condition. ``PLANTED`` lists them with the condition(s) expected to
catch each; ``embedding-cache verify`` and tests/crosshair run them and
report caught / planted. Names follow the TLA+ bug models (tla/MCBug*) where
one exists.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from .. import contracts, transitions
from ..entry import NOT_READY, CacheEntry
from ..errors import (
    AlreadyReadyError,
    CapacityError,
    DiscardHeldError,
    DuplicateAllocError,
    NotPinnedError,
    NotReadyError,
)
from ..state import CacheState
from ..transitions import _absent, _bad_key, _count

F = TypeVar("F", bound=Callable[..., Any])

_RAISES = re.compile(r"^[ \t]*Raises:.*", re.MULTILINE | re.DOTALL)


def _raises_like(real: Callable[..., Any]) -> Callable[[F], F]:
    """Give a planted body the real transition's ``Raises:`` section.

    CrossHair accepts exactly the documented raises (see ``crosshair_plugin``),
    so a planted copy must document the same ones as the function it copies.
    """

    def apply(func: F) -> F:
        match = _RAISES.search(real.__doc__ or "")
        if match:
            func.__doc__ = f"{func.__doc__ or ''}\n\n    {match.group(0).strip()}\n"
        return func

    return apply


def _alloc_checks(s: CacheState, key: str, n_blocks: int) -> int:
    """``alloc``'s argument and lifecycle checks, unchanged (the bugs are after them)."""
    if not isinstance(key, str):
        raise _bad_key(key, "alloc")
    if type(n_blocks) is not int:
        n_blocks = _count(n_blocks)
    elif n_blocks < 0:
        _count(n_blocks)
    existing = s.entries.get(key)
    if existing is not None:
        raise DuplicateAllocError(key, existing.state_name())
    if n_blocks > s.num_blocks:
        raise CapacityError(
            key, "absent", f"{n_blocks} blocks requested but capacity is {s.num_blocks}"
        )
    return n_blocks


def _take(s: CacheState, key: str, n_blocks: int) -> CacheEntry:
    """``alloc``'s last step, unchanged: take the top ``n_blocks`` free ids for ``key``."""
    free = s.free
    if n_blocks:
        taken = free[-n_blocks:]
        del free[-n_blocks:]
        taken.sort()
        block_ids = tuple(taken)
    else:
        block_ids = ()
    entry = CacheEntry(block_ids)
    s.entries[key] = entry
    return entry


def _evict_head(s: CacheState, *, newest: bool = False) -> None:
    """Evict one queued entry: the head (oldest), or with ``newest`` the tail."""
    victim, _ = s.queue.popitem(last=newest)
    blocks = s.entries.pop(victim).block_ids
    s.evictable_blocks -= len(blocks)
    s.free.extend(blocks)


# ---------------------------------------------------------------- alloc


@contracts.alloc_contract
@_raises_like(transitions.alloc)
def alloc_evict_newest(s: CacheState, key: str, n_blocks: int) -> CacheEntry | None:
    """PLANTED BUG (EvictNewest): evicts the newest queued entry instead of the oldest."""
    n_blocks = _alloc_checks(s, key, n_blocks)
    if len(s.free) < n_blocks:
        if len(s.free) + s.evictable_blocks < n_blocks:
            return None
        while len(s.free) < n_blocks:
            _evict_head(s, newest=True)  # the bug: the queue's tail, not its head
    return _take(s, key, n_blocks)


@contracts.alloc_contract
@_raises_like(transitions.alloc)
def alloc_evict_one_too_many(s: CacheState, key: str, n_blocks: int) -> CacheEntry | None:
    """PLANTED BUG (EvictOneTooMany): after evicting enough, evicts one more entry."""
    n_blocks = _alloc_checks(s, key, n_blocks)
    if len(s.free) < n_blocks:
        if len(s.free) + s.evictable_blocks < n_blocks:
            return None
        while len(s.free) < n_blocks:
            _evict_head(s)
        if s.queue:
            _evict_head(s)  # the bug: one victim too many
    return _take(s, key, n_blocks)


@contracts.alloc_contract
@_raises_like(transitions.alloc)
def alloc_evict_before_fail_fast(s: CacheState, key: str, n_blocks: int) -> CacheEntry | None:
    """PLANTED BUG (EvictBeforeFailFast): evicts what it can, then finds it is short."""
    n_blocks = _alloc_checks(s, key, n_blocks)
    while len(s.free) < n_blocks and s.queue:
        _evict_head(s)
    if len(s.free) < n_blocks:
        return None  # the bug: the fail-fast check comes after the evictions
    return _take(s, key, n_blocks)


@contracts.alloc_contract
@_raises_like(transitions.alloc)
def alloc_fail_fast_free_only(s: CacheState, key: str, n_blocks: int) -> CacheEntry | None:
    """PLANTED BUG (FailFastFreeOnly): the fail-fast check ignores evictable blocks."""
    n_blocks = _alloc_checks(s, key, n_blocks)
    if len(s.free) < n_blocks:
        return None  # the bug: should fail only when free + evictable < n
    return _take(s, key, n_blocks)


# ---------------------------------------------------------------- mark_ready


@contracts.mark_ready_contract
@_raises_like(transitions.mark_ready)
def mark_ready_forgets_count(s: CacheState, key: str) -> None:
    """PLANTED BUG (MarkReadyForgetsCount): queues the entry but never counts its blocks."""
    try:
        entry = s.entries[key]
    except (KeyError, TypeError):
        raise _absent(key, "mark_ready") from None
    if entry._pin_count != NOT_READY:
        raise AlreadyReadyError(key, entry.state_name())
    entry._pin_count = 0
    s.queue[key] = None  # the bug: s.evictable_blocks += len(entry.block_ids) is missing


# ---------------------------------------------------------------- pin


@contracts.pin_contract
@_raises_like(transitions.pin)
def pin_keeps_queued(s: CacheState, key: str) -> None:
    """PLANTED BUG (PinKeepsQueued): the first pin leaves the entry in the eviction queue."""
    try:
        entry = s.entries[key]
    except (KeyError, TypeError):
        raise _absent(key, "pin") from None
    count = entry._pin_count
    if count < 0:
        raise NotReadyError(key, entry.state_name())
    entry._pin_count = count + 1  # the bug: no dequeue (nor uncount) when count == 0


# ---------------------------------------------------------------- pin_if_ready


@contracts.pin_if_ready_contract
@_raises_like(transitions.pin_if_ready)
def pin_if_ready_pins_not_ready(s: CacheState, key: str) -> CacheEntry | None:
    """PLANTED BUG (PinIfReadyPinsNotReady): pins an entry whose save is still in flight."""
    entry = s.entries.get(key)
    if entry is None:
        if not isinstance(key, str):
            raise _bad_key(key, "pin_if_ready")
        return None
    count = entry._pin_count  # the bug: no early return when count < 0
    if count == 0:
        del s.queue[key]
        s.evictable_blocks -= len(entry.block_ids)
    entry._pin_count = count + 1
    return entry


# ---------------------------------------------------------------- unpin


@contracts.unpin_contract
@_raises_like(transitions.unpin)
def unpin_forgets_requeue(s: CacheState, key: str) -> None:
    """PLANTED BUG (UnpinForgetsRequeue): the last unpin counts the blocks but never re-queues."""
    try:
        entry = s.entries[key]
    except (KeyError, TypeError):
        raise _absent(key, "unpin") from None
    count = entry._pin_count
    if count <= 0:
        raise NotPinnedError(key, entry.state_name())
    count -= 1
    entry._pin_count = count
    if count == 0:
        s.evictable_blocks += len(entry.block_ids)  # the bug: s.queue[key] = None is missing


@contracts.unpin_contract
@_raises_like(transitions.unpin)
def unpin_always_appends(s: CacheState, key: str) -> None:
    """PLANTED BUG (UnpinDoubleAppend): every unpin queues the entry, even one still pinned."""
    try:
        entry = s.entries[key]
    except (KeyError, TypeError):
        raise _absent(key, "unpin") from None
    count = entry._pin_count
    if count <= 0:
        raise NotPinnedError(key, entry.state_name())
    count -= 1
    entry._pin_count = count
    s.queue[key] = None  # the bug: only when count == 0
    if count == 0:
        s.evictable_blocks += len(entry.block_ids)


# ---------------------------------------------------------------- discard


@contracts.discard_contract
@_raises_like(transitions.discard)
def discard_keeps_blocks(s: CacheState, key: str) -> None:
    """PLANTED BUG (DiscardKeepsBlocks): removes the entry but never frees its blocks."""
    try:
        entry = s.entries[key]
    except (KeyError, TypeError):
        raise _absent(key, "discard") from None
    if entry._pin_count != NOT_READY:
        raise DiscardHeldError(key, entry.state_name())
    del s.entries[key]  # the bug: s.free.extend(entry.block_ids) is missing


# ---------------------------------------------------------------- registry


@dataclass(frozen=True)
class PlantedBug:
    """One planted divergence: where it is, what it copies, what must catch it."""

    target: str  # dotted name of the planted function, as CrossHair takes it
    transition: str  # the transition it is a broken copy of
    expect: frozenset[str]  # condition names (spec/NAMES.md) any of which may report it


def _bug(func: Callable[..., Any], transition: str, *expect: str) -> PlantedBug:
    return PlantedBug(f"{__name__}.{func.__name__}", transition, frozenset(expect))


#: Every planted bug, with the named conditions that may catch it.
PLANTED: tuple[PlantedBug, ...] = (
    _bug(alloc_evict_newest, "alloc", "EvictOldestFirstProp", "EvictOnlyAsNeededProp"),
    _bug(alloc_evict_one_too_many, "alloc", "EvictOnlyAsNeededProp", "BlockConservationInv"),
    _bug(alloc_evict_before_fail_fast, "alloc", "FailedAllocUnchangedProp"),
    _bug(alloc_fail_fast_free_only, "alloc", "AllocFailsOnlyWhenShortProp"),
    _bug(mark_ready_forgets_count, "mark_ready", "EvictableCountInv"),
    _bug(pin_keeps_queued, "pin", "EvictQueueInv", "EvictableCountInv"),
    _bug(pin_if_ready_pins_not_ready, "pin_if_ready", "MisuseUnchangedProp"),
    _bug(unpin_forgets_requeue, "unpin", "EvictQueueInv"),
    _bug(unpin_always_appends, "unpin", "EvictQueueInv"),
    _bug(discard_keeps_blocks, "discard", "BlockConservationInv"),
)
