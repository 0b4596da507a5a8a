"""The cache's state transitions: small functions over a plain CacheState.

One function per operation, named after it (TLA+ action in brackets). Each
first validates its arguments and the key's lifecycle state and raises a typed
error (see ``errors``) before touching anything; then it makes the change.
None of them locks: ``EmbeddingCache`` calls them with its lock held, so the
contracts below also run under the lock.

Contracts (icontract) are attached only in the checked build
(``EMBEDDING_CACHE_CHECKED=1``): postconditions state what changed and what
did not, inductively, in O(1) or O(touched blocks), each under the name of the
invariant or property it protects. With ``EMBEDDING_CACHE_CHECKED=full`` every
transition also sweeps every invariant before and after (O(N)), which is what
CrossHair checks. The default build carries no contract code at all.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, cast

from . import contracts
from .entry import NOT_READY, CacheEntry
from .errors import (
    AlreadyReadyError,
    CapacityError,
    DiscardHeldError,
    DuplicateAllocError,
    NotPinnedError,
    NotReadyError,
    UnknownKeyError,
)
from .state import CacheState

# --------------------------------------------------------------------------
# Argument validation: raised identically in every build, before any change.


def bad_key_error(key: object, operation: str) -> TypeError:
    """The TypeError every method raises for a key that is not a str. O(1)."""
    return TypeError(f"EmbeddingCache.{operation}: key must be a str, not {type(key).__name__}")


def block_count(n_blocks: object) -> int:
    """``n_blocks`` as an int, or a TypeError/ValueError naming what is wrong. O(1)."""
    if isinstance(n_blocks, bool):
        raise TypeError("EmbeddingCache.alloc: n_blocks must be an int, not bool")
    try:
        n = operator.index(n_blocks)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(
            f"EmbeddingCache.alloc: n_blocks must be an int, not {type(n_blocks).__name__}"
        ) from None
    if n < 0:
        raise ValueError(f"EmbeddingCache.alloc: n_blocks must be >= 0, got {n}")
    return n


def entry_shape(shape: object) -> tuple[int, int]:
    """An alloc's ``shape`` (not None) as ``(rows, width)``, or a TypeError/ValueError
    naming what is wrong. O(1).

    The checks, in order, the first failure deciding (spec/MISUSE.md section 2): a
    tuple (a subclass such as ``torch.Size`` counts), of exactly 2 items, each an int
    (a bool refused; an object with ``__index__``, such as a numpy integer, accepted),
    each >= 0. A plain tuple of two plain ints comes back as it is, as the seed stores
    it; any other accepted shape comes back as a new plain tuple of plain ints, so an
    entry never holds a caller's subclass instance.
    """
    if not isinstance(shape, tuple):
        raise TypeError(
            "EmbeddingCache.alloc: shape must be None or a tuple of 2 ints, "
            f"not {type(shape).__name__}"
        )
    if len(shape) != 2:
        raise ValueError(
            f"EmbeddingCache.alloc: shape must have 2 dimensions (rows, width), got {len(shape)}"
        )
    # Both dimensions' types before either's sign: a wrong type is the graver error.
    dims = (shape_dimension(shape[0], 0), shape_dimension(shape[1], 1))
    for i, dim in enumerate(dims):
        if dim < 0:
            raise ValueError(f"EmbeddingCache.alloc: shape[{i}] must be >= 0, got {dim}")
    if type(shape) is tuple and type(shape[0]) is int and type(shape[1]) is int:
        return cast("tuple[int, int]", shape)  # already plain: kept as given
    return dims


def shape_dimension(dim: object, i: int) -> int:
    """``shape[i]`` as a plain int, or the TypeError naming it. O(1)."""
    if isinstance(dim, bool):
        raise TypeError(f"EmbeddingCache.alloc: shape[{i}] must be an int, not bool")
    try:
        return operator.index(dim)  # type: ignore[arg-type]  # a plain int, even of a subclass
    except TypeError:
        raise TypeError(
            f"EmbeddingCache.alloc: shape[{i}] must be an int, not {type(dim).__name__}"
        ) from None


def alloc_shape(key: object, n_blocks: object, shape: object) -> tuple[int, int]:
    """``entry_shape(shape)``, checked where SPEC.md section 3 puts it: after the key's
    type and ``n_blocks``, which still decide the error when they are bad too, and
    before the key's state (``alloc`` checks those next). O(1).

    The cache calls it before the ``alloc`` transition, whose signature stays the
    TLA+ action's: the shape is payload no transition reads.
    """
    if not isinstance(key, str):
        raise bad_key_error(key, "alloc")
    block_count(n_blocks)
    return entry_shape(shape)


# --------------------------------------------------------------------------
# Queries.


def get(s: CacheState, key: str) -> CacheEntry | None:
    """The live entry for ``key``, or None. O(1).

    Raises:
        TypeError: ``key`` is not a str.
    """
    if not isinstance(key, str):
        raise bad_key_error(key, "get")  # before the lookup: a foreign key may equal a live one
    return s.entries.get(key)


# --------------------------------------------------------------------------
# Transitions.


@contracts.alloc_contract
def alloc(s: CacheState, key: str, n_blocks: int) -> CacheEntry | None:
    """Allocate ``n_blocks`` for ``key``, evicting as needed [Alloc / AllocFail / AllocDecline].

    The new entry starts not-ready. Returns None, changing nothing, when free
    plus evictable blocks are fewer than ``n_blocks`` (fail-fast), or when the
    alloc would evict (a needed victim or, with contiguity, an extra one) and
    the admission filter (``s.admission``, if any) declines ``key``: then only
    the filter is told (``declined``). Otherwise
    evicts the policy's victims until enough blocks are free and takes
    ``n_blocks`` ids, ascending, from the free pool (the stack's top, or the
    fewest extents: ``allocators``).

    O(n_blocks log n_blocks + blocks of the evicted entries + the policy's
    evict cost per victim, O(1) amortized or O(log E): policies/), plus
    O(runs touched + log N) with the extents allocator, plus the filter's
    O(1) with one.

    Raises:
        TypeError: ``key`` is not a str, or ``n_blocks`` is not an int (or is a bool).
        ValueError: ``n_blocks`` is negative.
        DuplicateAllocError: ``key`` already has a live entry (an AssertionError).
        CapacityError: ``n_blocks`` exceeds the pool size (an AssertionError).
    """
    if not isinstance(key, str):
        raise bad_key_error(key, "alloc")
    if type(n_blocks) is not int:
        n_blocks = block_count(n_blocks)
    elif n_blocks < 0:
        block_count(n_blocks)
    entries = s.entries
    existing = entries.get(key)
    if existing is not None:
        raise DuplicateAllocError(key, existing.state_name())
    if n_blocks > s.num_blocks:
        raise CapacityError(
            key, "absent", f"{n_blocks} blocks requested but capacity is {s.num_blocks}"
        )
    free = s.free
    door = s.admission
    if s.contiguity:
        # A free run of n_blocks means n_blocks are free: nothing to evict, no filter to
        # ask (section 14.1's first case). Looked for first, as most allocs find one:
        # they skip the pool's count (a Python-level len) and take_contiguous's call.
        ids = free.take_run(n_blocks)
        if ids is None:
            ids = take_contiguous(s, key, n_blocks)
            if ids is None:
                return None  # short, or declined [AllocFail / AllocDecline]
    else:
        if len(free) < n_blocks:
            if len(free) + s.evictable_blocks < n_blocks:
                return None  # fail fast: evicting everything evictable would not be enough
            if door is not None and door.declines(key):
                door.declined(key)  # would evict: the filter says not yet [AllocDecline]
                return None
            evict_until(s, n_blocks)
        ids = free.take(n_blocks)
    # Ascending ids: an evicted entry's blocks go back to the pool in order,
    # so a later alloc of the same size can get them back contiguous.
    entry = CacheEntry(ids)
    entries[key] = entry
    admit = s.on_admit
    if admit is not None:
        admit(key, n_blocks)
    if door is not None:
        door.admitted(key)
    return entry


def take_contiguous(s: CacheState, key: str, n_blocks: int) -> tuple[int, ...] | None:
    """The ids of a contiguous alloc that found no free run of ``n_blocks`` (spec/SPEC.md
    section 14.1), or None, changing nothing but the filter's count, when it fails fast or
    the admission filter declines ``key``.

    Phase 1 as ``alloc`` without contiguity (fail fast; the filter asked; the needed
    victims), then one free run if one holds ``n_blocks`` now; else, after extra victims
    (``evict_for_run``), the best the pool has. When no victim was needed, the filter is
    asked before the extra ones (section 13.1), so a one-time item pushes nothing out.

    O(1) amortized for a run (``take_run``), else ``evict_for_run``'s and ``take``'s.
    """
    # Phase 1 repeats alloc's own lines rather than sharing a helper with it: the
    # helper would add a call to the default build's alloc, held to the seed's time.
    free = s.free  # the extents pool: validate_contiguity
    door = s.admission
    if len(free) < n_blocks:
        if len(free) + s.evictable_blocks < n_blocks:
            return None  # fail fast: evicting everything evictable would not be enough
        if door is not None and door.declines(key):
            door.declined(key)  # would evict: the filter says not yet [AllocDecline]
            return None
        evict_until(s, n_blocks)
        ids = free.take_run(n_blocks)
        if ids is not None:
            return ids
    elif door is not None and s.evictable_count() and door.declines(key):
        door.declined(key)  # only extra victims would go: the filter is asked for them too
        return None
    evict_for_run(s, n_blocks)
    return free.take(n_blocks)


def evict_until(s: CacheState, n_blocks: int) -> None:
    """Evict the policy's victims until ``n_blocks`` blocks are free [Evict, inside Alloc].

    The caller has checked that free + evictable blocks suffice, so the
    policy cannot run dry. O(blocks of the evicted entries + evict calls).
    """
    free, entries, evict = s.free, s.entries, s.on_evict
    give = free.give
    while len(free) < n_blocks:
        key = evict()[0]
        blocks = entries.pop(key).block_ids
        s.evictable_blocks -= len(blocks)
        give(blocks)


def evict_for_run(s: CacheState, n_blocks: int) -> None:
    """Evict up to ``s.contiguity`` further victims while no free run holds ``n_blocks``.

    [the contiguity loop, inside Alloc: spec/SPEC.md section 14] Called by an
    alloc that goes ahead and finds no free run of ``n_blocks``, after
    ``evict_until`` (so enough blocks are free): also by one that needed no
    eviction but finds its blocks only in pieces. The extra victims come in
    the policy's order, as the needed ones; the loop stops at a run, at k, or
    when the policy has no victim left. O(k x (runs of a victim + evict call)),
    amortized.
    """
    # evict_one's steps over bound locals (the loop is the contiguous path's hot spot).
    # Before each victim no free run held n_blocks, so one does after it iff the
    # extent its blocks merged into does: the extents' give returns that length (a
    # pool that keeps no runs returns None, and is asked has_run instead).
    # Each victim leaves the policy's evictable keys one fewer and nothing else joins
    # them here, so the policy runs dry exactly after its count's worth of victims.
    # The victims' blocks are uncounted once, at the end (nothing reads the count in
    # between): a slot's load and store less per victim.
    entries, evict, free = s.entries, s.on_evict, s.free
    give = free.give
    evicted = 0
    for _ in range(min(s.contiguity, s.evictable_count())):
        blocks = entries.pop(evict()[0]).block_ids
        evicted += len(blocks)
        merged = give(blocks)
        if free.has_run(n_blocks) if merged is None else merged >= n_blocks:
            break
    s.evictable_blocks -= evicted


def evict_one(s: CacheState) -> None:
    """Evict the policy's next victim: its blocks back to the pool, uncounted. O(its blocks).

    ``evict_until`` and ``evict_for_run`` inline the same steps over bound locals
    (the hot loops); everything else that evicts one victim calls this.
    """
    blocks = s.entries.pop(s.on_evict()[0]).block_ids
    s.evictable_blocks -= len(blocks)
    s.free.give(blocks)


@contracts.mark_ready_contract
def mark_ready(s: CacheState, key: str) -> None:
    """Mark a not-ready entry ready: it joins the evictable set [MarkReady].

    O(1), plus the policy's ``ready`` (O(1) or O(log E): policies/).

    Raises:
        TypeError: ``key`` is not a str.
        UnknownKeyError: ``key`` has no live entry (a KeyError).
        AlreadyReadyError: the entry is already ready or pinned (an AssertionError).
    """
    if not isinstance(key, str):
        raise bad_key_error(
            key, "mark_ready"
        )  # before the lookup: a foreign key may equal a live one
    try:
        entry = s.entries[key]
    except KeyError:
        raise UnknownKeyError(key, "mark_ready") from None
    if entry._pin_count != NOT_READY:
        raise AlreadyReadyError(key, entry.state_name())
    entry._pin_count = 0
    size = len(entry.block_ids)
    s.on_ready(key, size)
    s.evictable_blocks += size


@contracts.pin_contract
def pin(s: CacheState, key: str) -> None:
    """Pin a ready entry (counted, nested); the first pin makes it unevictable [Pin]. O(1).

    Raises:
        TypeError: ``key`` is not a str.
        UnknownKeyError: ``key`` has no live entry (a KeyError).
        NotReadyError: the entry is not ready (an AssertionError).
    """
    if not isinstance(key, str):
        raise bad_key_error(key, "pin")  # before the lookup: a foreign key may equal a live one
    try:
        entry = s.entries[key]
    except KeyError:
        raise UnknownKeyError(key, "pin") from None
    count = entry._pin_count
    if count < 0:
        raise NotReadyError(key, entry.state_name())
    # pin_step, inlined: a call is a fifth of a pin's cost, and pin is on every hit.
    if count == 0:
        s.on_hold(key)
        s.evictable_blocks -= len(entry.block_ids)
    entry._pin_count = count + 1
    hit = s.on_hit
    if hit is not None:
        hit(key)


@contracts.pin_if_ready_contract
def pin_if_ready(s: CacheState, key: str) -> CacheEntry | None:
    """Atomically pin ``key`` if it is present and ready, and return its entry [PinIfReady].

    Returns None when the key is absent; a not-ready entry is returned
    unpinned (its save is in flight, so the read may be retried). O(1).

    Raises:
        TypeError: ``key`` is not a str.
    """
    if not isinstance(key, str):
        raise bad_key_error(key, "pin_if_ready")  # before the lookup, as in get
    entry = s.entries.get(key)
    if entry is None:
        return None
    count = entry._pin_count
    if count >= 0:  # pin_step, inlined as in pin
        if count == 0:
            s.on_hold(key)
            s.evictable_blocks -= len(entry.block_ids)
        entry._pin_count = count + 1
        hit = s.on_hit
        if hit is not None:
            hit(key)
    return entry


def pin_step(s: CacheState, key: str, entry: CacheEntry) -> None:
    """Add one pin to a ready entry, a use; the first pin makes it unevictable [PinStep].

    O(1) (the policy's ``hold`` and ``hit`` are O(1) amortized). ``pin`` and
    ``pin_if_ready`` inline the same steps (the hot paths); a lease's pin calls this.
    """
    count = entry._pin_count
    if count == 0:
        s.on_hold(key)
        s.evictable_blocks -= len(entry.block_ids)
    entry._pin_count = count + 1
    hit = s.on_hit
    if hit is not None:
        hit(key)


@contracts.unpin_contract
def unpin(s: CacheState, key: str) -> None:
    """Release one pin; the last one makes the entry evictable again [Unpin].

    O(1), plus the policy's ``release`` on the last one (O(1) or O(log E)).

    Raises:
        TypeError: ``key`` is not a str.
        UnknownKeyError: ``key`` has no live entry (a KeyError).
        NotPinnedError: the entry holds no plain pin (an AssertionError): none
            at all, or only its leases' (``lease_transitions``).
    """
    if not isinstance(key, str):
        raise bad_key_error(key, "unpin")  # before the lookup: a foreign key may equal a live one
    try:
        entry = s.entries[key]
    except KeyError:
        raise UnknownKeyError(key, "unpin") from None
    count = entry._pin_count
    if count <= 0:
        raise NotPinnedError(key, entry.state_name())
    leased = s.leases.per_key
    if leased and count <= leased.get(key, 0):
        # Every pin left is a lease's (LeasePinsInv): plain unpin must not take it.
        raise NotPinnedError(
            key, entry.state_name(), "its pins are all leases; release the leases instead"
        )
    # unpin_step, inlined: a call is a fifth of an unpin's cost, and unpin ends every load.
    count -= 1
    entry._pin_count = count
    if count == 0:
        size = len(entry.block_ids)
        s.on_release(key, size)
        s.evictable_blocks += size


def unpin_step(s: CacheState, key: str, entry: CacheEntry) -> None:
    """Drop one pin of a pinned entry; the last one makes it evictable again [Unpin].

    O(1), plus the policy's ``release`` on the last one. A lease's release and
    expiry call it; ``unpin`` inlines the same steps (the hot path).
    """
    count = entry._pin_count - 1
    entry._pin_count = count
    if count == 0:
        size = len(entry.block_ids)
        s.on_release(key, size)
        s.evictable_blocks += size


@contracts.discard_contract
def discard(s: CacheState, key: str) -> None:
    """Remove a not-ready entry and free its blocks [Discard]. O(blocks of the entry).

    Used when an in-flight save fails before ``mark_ready``; ready or pinned
    entries leave only through eviction.

    Raises:
        TypeError: ``key`` is not a str.
        UnknownKeyError: ``key`` has no live entry (a KeyError).
        DiscardHeldError: the entry is ready or pinned (an AssertionError).
    """
    if not isinstance(key, str):
        raise bad_key_error(key, "discard")  # before the lookup: a foreign key may equal a live one
    try:
        entry = s.entries[key]
    except KeyError:
        raise UnknownKeyError(key, "discard") from None
    if entry._pin_count != NOT_READY:
        raise DiscardHeldError(key, entry.state_name())
    del s.entries[key]
    s.free.give(entry.block_ids)
    forget = s.on_forget
    if forget is not None:
        forget(key)


#: Every state-changing transition by operation name (conformance checks swap in planted ones).
OPERATIONS: dict[str, Callable[..., Any]] = {
    "alloc": alloc,
    "mark_ready": mark_ready,
    "pin": pin,
    "pin_if_ready": pin_if_ready,
    "unpin": unpin,
    "discard": discard,
}
