"""Planted bugs of the doorkeeper with contiguity at once (spec/SPEC.md section 14.1).

NEVER used by the cache. Each is a copy of ``transitions.alloc`` whose composition of
the admission step (section 13) with the contiguity loop (section 14) has one plausible
mistake, wearing the real alloc contract: the same mistakes as the TLA+ bug models of
tla/combined/ (linked by ``tla_model``). Each runs with the doorkeeper on the extents
allocator with ``contiguity=1``, and neither shows with one rule alone: without
contiguity there are no extra victims, and without a filter no decline. Shared bugs: each
talks to the policy only through its hooks, so it is a bug under every policy.

The contracts catch both (``run_witness``), and so does trace validation: a trace
recorded with both rules is checked against tla/combined/'s composition (tla/trace's
``RuleTakes`` and ``RuleReturnsNone``). So does the stateful machine (a planted bug's
machine runs with the bug's filter and k; its reference model runs section 14.1) for
DeclineEvictsExtras, but not bound to for DeclinesForExtras, which random runs reach
only now and then. The other layers do not drive the two rules together yet
(``WHY_BLIND``).
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

from .bug import LAYERS, Call, PlantedBug
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
#: Why the stateful machine is not bound to catch DeclinesForExtras.
WHY_STATEFUL_MISSES_DECLINES_FOR_EXTRAS = (
    "the mistake needs an alloc of a key not at the door whose blocks are free but only "
    "in pieces while an entry is evictable: at 300 examples the machine met it under "
    "sieve only, not under fifo, gdsf or s3fifo, so the stateful layer is not a "
    "deterministic catch; the contracts and the traces are. "
)


@contracts.alloc_contract
@_raises_like(transitions.alloc)
def alloc_declines_for_extras(s: CacheState, key: str, n_blocks: int) -> CacheEntry | None:
    """PLANTED BUG (DeclinesForExtras): the filter is asked whenever the alloc would evict
    anything, contiguity's extra victims included, so a first-seen key whose blocks are
    free, but only in pieces, is declined."""
    n_blocks = _alloc_checks(s, key, n_blocks)
    free = s.free
    if len(free) + s.evictable_blocks < n_blocks:
        return None
    extra = s.contiguity and not free.has_run(n_blocks) and s.evictable_count()
    door = s.admission
    if (len(free) < n_blocks or extra) and door is not None and door.declines(key):  # the bug
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
    declined = False
    if len(free) < n_blocks:
        if len(free) + s.evictable_blocks < n_blocks:
            return None
        door = s.admission
        if door is not None and door.declines(key):
            door.declined(key)
            declined = True  # the bug: no return here
        else:
            evict_until(s, n_blocks)
    if s.contiguity and not free.has_run(n_blocks):
        evict_for_run(s, n_blocks)
    if declined:
        return None
    return _take(s, key, n_blocks)


def _combined_bug(
    name: str,
    expect: str,
    witness: tuple[Call, ...],
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
        "DeclinesForExtras", "AllocDeclinesOnlyWhenEvictingProp",
        # a on {0}, b on {1} (ready); a's discard leaves {0, 2}: 2 free, no run of 2.
        (("alloc", "a", 1), ("alloc", "b", 1), ("mark_ready", "b"), ("discard", "a"),
         ("alloc", "x", 2)),
        alloc_declines_for_extras,
        catching=("contracts", "traces"),
        why_blind=WHY_STATEFUL_MISSES_DECLINES_FOR_EXTRAS + WHY_BLIND,
    ),
    _combined_bug(
        "DeclineEvictsExtras", "FailedAllocUnchangedProp",
        # a, b, c ready on one block each: x's alloc would evict, and x is not at the door.
        (("alloc", "a", 1), ("alloc", "b", 1), ("alloc", "c", 1), ("mark_ready", "a"),
         ("mark_ready", "b"), ("mark_ready", "c"), ("alloc", "x", 2)),
        alloc_decline_evicts_extras,
    ),
)  # fmt: skip
