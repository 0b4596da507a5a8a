"""Planted bugs of the shared core: broken copies of transitions, wearing the real contracts.

NEVER used by the cache. Each function is a copy of one function in
``transitions`` with one plausible mistake, decorated with that operation's
own contract (``contracts.<op>_contract``, the very decorator ``transitions``
applies), so the checked build and CrossHair judge it by the real
conditions. The bodies talk to the policy only through its hooks (``s.on_ready``, ...), so each
bug is one for every policy. ``inspect.unwrap`` gives the bare body (no
contract code), for the layers that must catch a bug on their own.

``BUGS`` holds their catalogue entries (name, expected conditions, witness,
TLA+ bug model); ``QUERY_BUGS`` the bug in a query's answer, kept apart.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from embedding_cache import (
    AlreadyReadyError,
    CacheEntry,
    CapacityError,
    DiscardHeldError,
    DuplicateAllocError,
    NotPinnedError,
    NotReadyError,
    UnknownKeyError,
)
from embedding_cache.verification import (
    NOT_READY,
    CacheState,
    bad_key_error,
    block_count,
    contracts,
    evict_one,
    pin_step,
    set_pin_count,
    transitions,
)

from .bug import LAYERS, ORDER, PINNED_A, READY_ABC, PlantedBug, transition_bug

F = TypeVar("F", bound=Callable[..., Any])

_RAISES = re.compile(r"^[ \t]*Raises:.*", re.MULTILINE | re.DOTALL)


def _live_entry(s: CacheState, key: str, operation: str) -> CacheEntry:
    """The real lookups, unchanged (the bugs are after them): ``key``'s entry, or the
    error they raise for a bad key type or an absent key. O(1)."""
    try:
        return s.entries[key]
    except (KeyError, TypeError):  # TypeError: an unhashable key
        if not isinstance(key, str):
            raise bad_key_error(key, operation) from None
        raise UnknownKeyError(key, operation) from None


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
    """``alloc``'s argument and lifecycle checks, unchanged (the bugs are after them). O(1)."""
    if not isinstance(key, str):
        raise bad_key_error(key, "alloc")
    if type(n_blocks) is not int:
        n_blocks = block_count(n_blocks)
    elif n_blocks < 0:
        block_count(n_blocks)
    existing = s.entries.get(key)
    if existing is not None:
        raise DuplicateAllocError(key, existing.state_name())
    if n_blocks > s.num_blocks:
        raise CapacityError(
            key, "absent", f"{n_blocks} blocks requested but capacity is {s.num_blocks}"
        )
    return n_blocks


def _take(s: CacheState, key: str, n_blocks: int, *, tell_filter: bool = True) -> CacheEntry:
    """``alloc``'s last step, unchanged: take ``n_blocks`` free ids from the pool, tell
    the policy and the admission filter (if any; ``tell_filter=False`` is a bug)."""
    entry = CacheEntry(s.free.take(n_blocks))
    s.entries[key] = entry
    admit = s.on_admit
    if admit is not None:
        admit(key, n_blocks)
    door = s.admission
    if door is not None and tell_filter:
        door.admitted(key)
    return entry


#: Evict the policy's next victim, as ``transitions.evict_until`` does, once.
_evict_one = evict_one


# ---------------------------------------------------------------- alloc


@contracts.alloc_contract
@_raises_like(transitions.alloc)
def alloc_evict_one_too_many(s: CacheState, key: str, n_blocks: int) -> CacheEntry | None:
    """PLANTED BUG (EvictOneTooMany): the eviction loop tests ``<=``, not ``<``, so it
    evicts one entry more than needed whenever one is left, even when enough was free
    (tla/: MCBugEvictOneTooMany's ``EnoughOneTooMany``)."""
    n_blocks = _alloc_checks(s, key, n_blocks)
    if len(s.free) + s.evictable_blocks < n_blocks:
        return None
    while len(s.free) <= n_blocks and s.evictable_count():  # the bug: <= instead of <
        _evict_one(s)
    return _take(s, key, n_blocks)


@contracts.alloc_contract
@_raises_like(transitions.alloc)
def alloc_evict_before_fail_fast(s: CacheState, key: str, n_blocks: int) -> CacheEntry | None:
    """PLANTED BUG (EvictBeforeFailFast): evicts what it can, then finds it is short."""
    n_blocks = _alloc_checks(s, key, n_blocks)
    while len(s.free) < n_blocks and s.evictable_count():
        _evict_one(s)
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


def _not_ready_entry(s: CacheState, key: str) -> CacheEntry:
    """``mark_ready``'s lookup and lifecycle check, unchanged. O(1)."""
    entry = _live_entry(s, key, "mark_ready")
    if entry.pin_count != NOT_READY:
        raise AlreadyReadyError(key, entry.state_name())
    return entry


@contracts.mark_ready_contract
@_raises_like(transitions.mark_ready)
def mark_ready_forgets_count(s: CacheState, key: str) -> None:
    """PLANTED BUG (MarkReadyForgetsCount): tells the policy but never counts the blocks."""
    entry = _not_ready_entry(s, key)
    set_pin_count(entry, 0)
    s.on_ready(key, len(entry.block_ids))
    # the bug: s.evictable_blocks += len(entry.block_ids) is missing


@contracts.mark_ready_contract
@_raises_like(transitions.mark_ready)
def mark_ready_forgets_policy(s: CacheState, key: str) -> None:
    """PLANTED BUG (MarkReadyForgetsPolicy): counts the blocks but never tells the policy."""
    entry = _not_ready_entry(s, key)
    set_pin_count(entry, 0)
    s.evictable_blocks += len(entry.block_ids)  # the bug: s.on_ready(key, size) is missing


# ---------------------------------------------------------------- pin


@contracts.pin_contract
@_raises_like(transitions.pin)
def pin_keeps_evictable(s: CacheState, key: str) -> None:
    """PLANTED BUG (PinKeepsEvictable): the first pin uncounts the entry but leaves it
    in the policy, where it can still be chosen as a victim."""
    entry = _live_entry(s, key, "pin")
    count = entry.pin_count
    if count < 0:
        raise NotReadyError(key, entry.state_name())
    if count == 0:
        s.evictable_blocks -= len(entry.block_ids)  # the bug: s.on_hold(key) is missing
    set_pin_count(entry, count + 1)
    hit = s.on_hit
    if hit is not None:
        hit(key)


@contracts.pin_contract
@_raises_like(transitions.pin)
def pin_always_uncounts(s: CacheState, key: str) -> None:
    """PLANTED BUG (PinAlwaysDecrements): every pin takes the entry's blocks off the
    evictable count, not only the first."""
    entry = _live_entry(s, key, "pin")
    count = entry.pin_count
    if count < 0:
        raise NotReadyError(key, entry.state_name())
    if count == 0:
        s.on_hold(key)
    s.evictable_blocks -= len(entry.block_ids)  # the bug: only when count == 0
    set_pin_count(entry, count + 1)
    hit = s.on_hit
    if hit is not None:
        hit(key)


# ---------------------------------------------------------------- pin_if_ready


def _pin_if_ready_lookup(s: CacheState, key: str) -> CacheEntry | None:
    """``pin_if_ready``'s lookup, unchanged (the bugs are after it): a non-str key is a
    TypeError before the lookup, as in the real one; an absent key is None. O(1)."""
    if not isinstance(key, str):
        raise bad_key_error(key, "pin_if_ready")
    return s.entries.get(key)


@contracts.pin_if_ready_contract
@_raises_like(transitions.pin_if_ready)
def pin_if_ready_pins_not_ready(s: CacheState, key: str) -> CacheEntry | None:
    """PLANTED BUG (PinIfReadyPinsNotReady): pins an entry whose save is still in flight."""
    entry = _pin_if_ready_lookup(s, key)
    if entry is None:
        return None
    count = entry.pin_count  # the bug: no early return when count < 0
    if count >= 0:
        pin_step(s, key, entry)
    else:
        set_pin_count(entry, count + 1)  # -1 -> 0: "ready", yet never made evictable
    return entry


@contracts.pin_if_ready_contract
@_raises_like(transitions.pin_if_ready)
def pin_if_ready_forgets_pin(s: CacheState, key: str) -> CacheEntry | None:
    """PLANTED BUG (PinIfReadyForgetsPin): returns a ready entry without pinning it."""
    entry = _pin_if_ready_lookup(s, key)
    if entry is None:
        return None
    return entry  # the bug: pin_step(s, key, entry) is missing for a ready entry


# ---------------------------------------------------------------- unpin


def _unpin_step(s: CacheState, key: str) -> tuple[CacheEntry, int]:
    """``unpin``'s lookup, check and decrement, unchanged; the new count. O(1)."""
    entry = _live_entry(s, key, "unpin")
    count = entry.pin_count
    if count <= 0:
        raise NotPinnedError(key, entry.state_name())
    count -= 1
    set_pin_count(entry, count)
    return entry, count


@contracts.unpin_contract
@_raises_like(transitions.unpin)
def unpin_forgets_release(s: CacheState, key: str) -> None:
    """PLANTED BUG (UnpinForgetsRelease): the last unpin counts the blocks but never
    gives the entry back to the policy."""
    entry, count = _unpin_step(s, key)
    if count == 0:
        s.evictable_blocks += len(entry.block_ids)  # the bug: s.on_release is missing


@contracts.unpin_contract
@_raises_like(transitions.unpin)
def unpin_forgets_count(s: CacheState, key: str) -> None:
    """PLANTED BUG (UnpinForgetsCount): the last unpin gives the entry back to the policy
    but never counts its blocks as evictable."""
    entry, count = _unpin_step(s, key)
    if count == 0:
        s.on_release(key, len(entry.block_ids))
        # the bug: s.evictable_blocks += len(entry.block_ids) is missing


@contracts.unpin_contract
@_raises_like(transitions.unpin)
def unpin_always_releases(s: CacheState, key: str) -> None:
    """PLANTED BUG (UnpinDoubleAppend): every unpin gives the entry to the policy,
    even one that is still pinned."""
    entry, count = _unpin_step(s, key)
    size = len(entry.block_ids)
    s.on_release(key, size)  # the bug: only when count == 0
    if count == 0:
        s.evictable_blocks += size


# ---------------------------------------------------------------- discard


@contracts.discard_contract
@_raises_like(transitions.discard)
def discard_keeps_blocks(s: CacheState, key: str) -> None:
    """PLANTED BUG (DiscardKeepsBlocks): removes the entry but never frees its blocks."""
    entry = _live_entry(s, key, "discard")
    if entry.pin_count != NOT_READY:
        raise DiscardHeldError(key, entry.state_name())
    del s.entries[key]  # the bug: s.free.extend(entry.block_ids) is missing
    forget = s.on_forget
    if forget is not None:
        forget(key)


# ---------------------------------------------------------------- has_held_entries


def has_held_entries_not_ready_only(s: CacheState) -> bool:
    """PLANTED BUG (HeldIgnoresPins): counts only not-ready entries as held, forgetting
    the pinned ones (tla/: MCBugHeldIgnoresPins). O(entries)."""
    return any(e.pin_count == NOT_READY for e in s.entries.values())  # the bug: pins != 0


# ---------------------------------------------------------------- the entries

#: The shared core's bugs: broken transitions, each a bug under every policy.
BUGS: tuple[PlantedBug, ...] = (
    transition_bug(
        "EvictOneTooMany", alloc_evict_one_too_many,
        (ORDER, "BlockConservationInv", "EvictableCountInv"),
        (*READY_ABC, ("alloc", "d", 1)), "MCBugEvictOneTooMany",
    ),
    transition_bug(
        "EvictBeforeFailFast", alloc_evict_before_fail_fast,
        ("FailedAllocUnchangedProp",),
        (("alloc", "n", 1), ("alloc", "a", 1), ("mark_ready", "a"), ("alloc", "b", 1),
         ("mark_ready", "b"), ("alloc", "d", 3)),
        "MCBugEvictBeforeFailFast",
    ),
    transition_bug(
        "FailFastFreeOnly", alloc_fail_fast_free_only,
        ("AllocFailsOnlyWhenShortProp",),
        (*READY_ABC, ("alloc", "d", 2)), "MCBugFailFastFreeOnly",
    ),
    transition_bug(
        "MarkReadyForgetsCount", mark_ready_forgets_count,
        ("EvictableCountInv",),
        (("alloc", "a", 2), ("mark_ready", "a")), "MCBugMarkReadyForgetsCount",
    ),
    transition_bug(
        "MarkReadyForgetsPolicy", mark_ready_forgets_policy,
        ("EvictableSetInv",),
        (("alloc", "a", 2), ("mark_ready", "a")),
    ),
    transition_bug(
        "PinKeepsEvictable", pin_keeps_evictable,
        ("EvictableSetInv", "EvictableCountInv"),
        (*READY_ABC, ("pin", "b")), "MCBugEvictPinned",
    ),
    transition_bug(
        "PinAlwaysDecrements", pin_always_uncounts,
        ("EvictableCountInv",),
        (*PINNED_A, ("pin", "a")), "MCBugPinAlwaysDecrements",
    ),
    transition_bug(
        "PinIfReadyPinsNotReady", pin_if_ready_pins_not_ready,
        ("MisuseUnchangedProp",),
        (("alloc", "a", 1), ("pin_if_ready", "a")),
    ),
    transition_bug(
        "PinIfReadyForgetsPin", pin_if_ready_forgets_pin,
        ("EvictableSetInv",),
        (("alloc", "a", 1), ("mark_ready", "a"), ("pin_if_ready", "a")),
    ),
    transition_bug(
        "UnpinForgetsRelease", unpin_forgets_release,
        ("EvictableSetInv",),
        (("alloc", "z", 1), ("mark_ready", "z"), *PINNED_A, ("unpin", "a")),
    ),
    transition_bug(
        "UnpinForgetsCount", unpin_forgets_count,
        ("EvictableCountInv",),
        (*PINNED_A, ("unpin", "a")), "MCBugUnpinForgetsCount",
    ),
    transition_bug(
        "UnpinDoubleAppend", unpin_always_releases,
        ("EvictableSetInv",),
        (*PINNED_A, ("pin", "a"), ("unpin", "a")), "MCBugUnpinDoubleAppend",
    ),
    transition_bug(
        "DiscardKeepsBlocks", discard_keeps_blocks,
        ("BlockConservationInv",),
        (("alloc", "a", 2), ("discard", "a")), "MCBugDiscardKeepsBlocks",
    ),
)  # fmt: skip

#: Bugs in a query's answer, which no layer of ``LAYERS`` can see (module docstring).
QUERY_BUGS: tuple[PlantedBug, ...] = (
    PlantedBug(
        "HeldIgnoresPins", None, "query", "has_held_entries", frozenset(("HeldEntriesInv",)),
        "MCBugHeldIgnoresPins", (*PINNED_A, ("has_held_entries", "")),
        body=has_held_entries_not_ready_only, blind=frozenset(LAYERS),
        why_blind="a query's answer, not the state: every layer reads the state (the "
        "abstraction asks the real has_held_entries); the cache's own method is wrong",
    ),
)  # fmt: skip
