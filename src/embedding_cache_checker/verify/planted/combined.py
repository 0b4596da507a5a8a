"""Planted bugs of the doorkeeper with contiguity at once (spec/SPEC.md section 14.1).

NEVER used by the cache. Each is a copy of ``transitions.alloc`` whose composition of
the admission step (section 13) with the contiguity loop (section 14) has one plausible
mistake, wearing the real alloc contract: the same mistakes as the TLA+ bug models of
tla/combined/ (linked by ``tla_model``). Each runs with the doorkeeper on the extents
allocator with ``contiguity=1``, and neither shows with one rule alone: without
contiguity there are no extra victims, and without a filter no decline. Shared bugs: each
talks to the policy only through its hooks, so it is a bug under every policy.

The contracts catch all three (``run_witness``), and so does trace validation: a trace
recorded with both rules is checked against tla/combined/'s composition (tla/trace's
``RuleTakes`` and ``RuleReturnsNone``), and the stateful machine (a planted bug's machine
runs with the bug's filter and k; its reference model runs sections 13.1 and 14.1) for
DeclineEvictsExtras, but not bound to for the other two, which random runs do not reach
(``WHY_STATEFUL_MISSES_THE_QUESTION``). The other layers do not drive the two rules
together yet (``WHY_BLIND``).
"""

from __future__ import annotations

from collections.abc import Callable

from embedding_cache import CacheEntry, Doorkeeper
from embedding_cache.verification import (
    CacheState,
    contracts,
    evict_for_run,
    evict_until,
    transitions,
)

from .bug import LAYERS, PlantedBug, WitnessCall
from .core import _alloc_checks, _raises_like, _take

#: The layers that catch these bugs; the others are blind to them (for now).
CATCHING = ("contracts", "stateful", "traces")
#: Why the other layers are blind to them (for now).
WHY_BLIND = (
    "the doorkeeper with contiguity is driven only through the contracts, the stateful "
    "machine and the traces so far: the replay runs without either rule, and CrossHair "
    "builds states without a filter on the stack allocator; the TLA+ bug models of "
    "tla/combined/ plant the same mistakes"
)
#: Why the stateful machine is not bound to catch the two bugs of the filter's question.
WHY_STATEFUL_MISSES_THE_QUESTION = (
    "the mistake needs an alloc whose blocks are free but only in pieces, of a key not at "
    "the door (and, for ExtrasUnfiltered, while an entry is evictable; for "
    "DeclinesWithNothingToEvict, while none is): at 300 examples the random machines met "
    "it for no policy, so the stateful layer is not a deterministic catch; the contracts "
    "and the traces are. "
)


@contracts.alloc_contract
@_raises_like(transitions.alloc)
def alloc_extras_unfiltered(s: CacheState, key: str, n_blocks: int) -> CacheEntry | None:
    """PLANTED BUG (ExtrasUnfiltered): the filter is asked only when phase 1 would evict,
    as without contiguity, so a first-seen key whose blocks are free but only in pieces
    is let in and evicts extra victims: a one-time item pushes entries out."""
    n_blocks = _alloc_checks(s, key, n_blocks)
    free = s.free
    if len(free) < n_blocks:
        if len(free) + s.evictable_blocks < n_blocks:
            return None
        door = s.admission
        if door is not None and door.declines(key):
            door.declined(key)
            return None
        evict_until(s, n_blocks)
    if s.contiguity and not free.has_run(n_blocks):
        evict_for_run(s, n_blocks)  # the bug: the filter was not asked for these
    return _take(s, key, n_blocks)


@contracts.alloc_contract
@_raises_like(transitions.alloc)
def alloc_declines_with_nothing_to_evict(
    s: CacheState, key: str, n_blocks: int
) -> CacheEntry | None:
    """PLANTED BUG (DeclinesWithNothingToEvict): an alloc that finds no free run is taken
    for one that would evict extra victims even when no entry is evictable, so it is
    declined although nothing would be evicted."""
    n_blocks = _alloc_checks(s, key, n_blocks)
    free = s.free
    if len(free) + s.evictable_blocks < n_blocks:
        return None
    extra = s.contiguity and not free.has_run(n_blocks)  # the bug: no evictable_count()
    door = s.admission
    if (len(free) < n_blocks or extra) and door is not None and door.declines(key):
        door.declined(key)
        return None
    if len(free) < n_blocks:
        evict_until(s, n_blocks)
    if s.contiguity and not free.has_run(n_blocks):
        evict_for_run(s, n_blocks)
    return _take(s, key, n_blocks)


@contracts.alloc_contract
@_raises_like(transitions.alloc)
def alloc_decline_evicts_extras(s: CacheState, key: str, n_blocks: int) -> CacheEntry | None:
    """PLANTED BUG (DeclineEvictsExtras): a declined alloc skips phase 1 but does not return
    at once: the contiguity loop still runs, evicting up to k extra victims, before None."""
    n_blocks = _alloc_checks(s, key, n_blocks)
    free = s.free
    if len(free) + s.evictable_blocks < n_blocks:
        return None
    extra = s.contiguity and not free.has_run(n_blocks) and s.evictable_count()
    door = s.admission
    declined = False
    if (len(free) < n_blocks or extra) and door is not None and door.declines(key):
        door.declined(key)
        declined = True  # the bug: no return here
    elif len(free) < n_blocks:
        evict_until(s, n_blocks)
    if s.contiguity and not free.has_run(n_blocks):
        evict_for_run(s, n_blocks)
    if declined:
        return None
    return _take(s, key, n_blocks)


def _combined_bug(
    name: str,
    expect: str,
    witness: tuple[WitnessCall, ...],
    body: Callable[..., CacheEntry | None],
    catching: tuple[str, ...] = CATCHING,
    why_blind: str = WHY_BLIND,
) -> PlantedBug:
    return PlantedBug(
        name, None, "transition", "alloc", frozenset({expect}),
        f"MCBugAdmissionContiguity{name}", witness, 3,
        body=body,
        blind=frozenset(layer for layer in LAYERS if layer not in catching),
        why_blind=why_blind,
        admission=Doorkeeper.name,
        contiguity=1,
    )  # fmt: skip


#: The catalogue entries (``planted`` assembles them with the others).
BUGS: tuple[PlantedBug, ...] = (
    _combined_bug(
        "ExtrasUnfiltered", "DoorkeeperRuleProp",
        # a and b one block each, b ready; a's discard leaves 2 free ids, not one run:
        # x (first seen) would evict b as an extra victim, so the filter must decline it.
        (("alloc", "a", 1), ("alloc", "b", 1), ("mark_ready", "b"), ("discard", "a"),
         ("alloc", "x", 2)),
        alloc_extras_unfiltered,
        catching=("contracts", "traces"),
        why_blind=WHY_STATEFUL_MISSES_THE_QUESTION + WHY_BLIND,
    ),
    _combined_bug(
        "DeclinesWithNothingToEvict", "AllocDeclinesOnlyWhenEvictingProp",
        # a, b, c one block each; discarding a and c leaves 2 free ids, not one run, and
        # nothing evictable (b is not ready): x fits in pieces and must be let in.
        (("alloc", "a", 1), ("alloc", "b", 1), ("alloc", "c", 1), ("discard", "a"),
         ("discard", "c"), ("alloc", "x", 2)),
        alloc_declines_with_nothing_to_evict,
        catching=("contracts", "traces"),
        why_blind=WHY_STATEFUL_MISSES_THE_QUESTION + WHY_BLIND,
    ),
    _combined_bug(
        "DeclineEvictsExtras", "FailedAllocUnchangedProp",
        # a, b, c ready on one block each: x's alloc would evict, and x is not at the door.
        (("alloc", "a", 1), ("alloc", "b", 1), ("alloc", "c", 1), ("mark_ready", "a"),
         ("mark_ready", "b"), ("mark_ready", "c"), ("alloc", "x", 2)),
        alloc_decline_evicts_extras,
    ),
)  # fmt: skip
