"""Planted bugs of contiguity-aware eviction (spec/SPEC.md section 14), run with k = 1.

NEVER used by the cache. Each is a copy of ``transitions.alloc`` whose
contiguity loop (``transitions.evict_for_run``) has one plausible mistake,
wearing the real alloc contract: the same mistakes as the TLA+ bug models
of tla/contiguity/ (linked by ``tla_model``). Each runs on the extents
allocator with ``contiguity=1`` (``bug.contiguity``). Three talk to the
policy only through its hooks, so they are bugs under every policy; the
fourth takes fifo's newest entry as the extra victim, so it is fifo's.

The contracts catch all four (the checked builds; ``run_witness``), and so
does trace validation: a trace recorded with contiguity is checked against
the contiguity loop of tla/contiguity/ (tla/trace's ``RuleTakes``), and so
does the state-graph replay, block-exact (each policy's
MCReplayContiguity<Policy>: the one edge holding the code's ids, free ids
and victims must exist; ContiguityOneTooMany's second extra victim shows at
3 blocks behind a victim of no blocks). So does the stateful machine (its
reference model runs section 14.1's two phases on the recorded block ids;
tests/test_stateful.py), for all but ContiguityOneTooMany, which random runs
reach only now and then. CrossHair does not drive contiguity yet
(``WHY_BLIND``).
"""

from __future__ import annotations

from collections.abc import Callable

from embedding_cache import CacheEntry
from embedding_cache.policies import FifoPolicy
from embedding_cache.verification import CacheState, contracts, evict_until, transitions

from .bug import LAYERS, PlantedBug, WitnessCall
from .core import _alloc_checks, _evict_one, _raises_like, _take

#: The layers that catch contiguity bugs; the others are blind to them (for now).
CATCHING = ("contracts", "stateful", "replay", "traces")
#: Why the other layers are blind to contiguity bugs (for now).
WHY_BLIND = (
    "contiguity is driven through the contracts, the stateful machine, the replay "
    "(block-exact) and the traces so far: CrossHair builds states on the stack allocator; "
    "the TLA+ bug models of tla/contiguity/ plant the same mistakes"
)

#: An extra-eviction loop: (state, n) -> None, evicting beyond need.
ExtraLoop = Callable[[CacheState, int], None]


def _alloc_with(s: CacheState, key: str, n_blocks: int, extra: ExtraLoop) -> CacheEntry | None:
    """``transitions.alloc`` without an admission filter, with ``extra`` as its loop."""
    n_blocks = _alloc_checks(s, key, n_blocks)
    if len(s.free) < n_blocks:
        if len(s.free) + s.evictable_blocks < n_blocks:
            return None
        evict_until(s, n_blocks)
    extra(s, n_blocks)
    return _take(s, key, n_blocks)


def _one_too_many(s: CacheState, n: int) -> None:
    for _ in range(s.contiguity + 1):  # the bug: one more round than k
        if s.free.has_run(n) or not s.evictable_count():
            return
        _evict_one(s)


def _despite_run(s: CacheState, n: int) -> None:
    for _ in range(s.contiguity):
        if not s.evictable_count():  # the bug: the run test is left out
            return
        _evict_one(s)


def _never(s: CacheState, n: int) -> None:
    """The bug: no loop at all; the alloc ends at enough, as without contiguity."""


def _extra_newest(s: CacheState, n: int) -> None:
    policy = s.policy
    assert isinstance(policy, FifoPolicy)
    for _ in range(s.contiguity):
        if s.free.has_run(n) or not s.evictable_count():
            return
        key, _size = policy.queue.popitem(last=True)  # the bug: the newest, not the oldest
        blocks = s.entries.pop(key).block_ids
        s.evictable_blocks -= len(blocks)
        s.free.give(blocks)


@contracts.alloc_contract
@_raises_like(transitions.alloc)
def alloc_evicts_one_too_many(s: CacheState, key: str, n_blocks: int) -> CacheEntry | None:
    """PLANTED BUG (ContiguityOneTooMany): the loop's bound is off by one, so an alloc may
    evict k + 1 victims beyond need."""
    return _alloc_with(s, key, n_blocks, _one_too_many)


@contracts.alloc_contract
@_raises_like(transitions.alloc)
def alloc_evicts_despite_run(s: CacheState, key: str, n_blocks: int) -> CacheEntry | None:
    """PLANTED BUG (ContiguityDespiteRun): the run test is left out, so every alloc evicts k
    extra victims, even when a free run already holds its blocks."""
    return _alloc_with(s, key, n_blocks, _despite_run)


@contracts.alloc_contract
@_raises_like(transitions.alloc)
def alloc_never_seeks_run(s: CacheState, key: str, n_blocks: int) -> CacheEntry | None:
    """PLANTED BUG (ContiguityNever): the loop ends at enough blocks, as without contiguity."""
    return _alloc_with(s, key, n_blocks, _never)


@contracts.alloc_contract
@_raises_like(transitions.alloc)
def alloc_evicts_newest_extra(s: CacheState, key: str, n_blocks: int) -> CacheEntry | None:
    """PLANTED BUG (ContiguityExtraNewest): the extra victim is fifo's newest entry, not
    the policy's next one."""
    return _alloc_with(s, key, n_blocks, _extra_newest)


def _contiguity_bug(
    name: str,
    expect: str,
    witness: tuple[WitnessCall, ...],
    blocks: int,
    body: Callable[..., CacheEntry | None],
    policy: str | None = None,
    catching: tuple[str, ...] = CATCHING,
    why_blind: str = WHY_BLIND,
) -> PlantedBug:
    return PlantedBug(
        name, policy, "transition", "alloc", frozenset({expect}), f"MCBug{name}", witness,
        blocks,
        body=body,
        blind=frozenset(layer for layer in LAYERS if layer not in catching),
        why_blind=why_blind,
        contiguity=1,
    )  # fmt: skip


#: Why the stateful machine is not bound to catch ContiguityOneTooMany.
WHY_STATEFUL_MISSES_ONE_TOO_MANY = (
    "the second extra victim needs an alloc whose first extra victim still leaves no "
    "free run of n: random runs reach it in 6 to 10 of 10 at 300 examples, depending on "
    "policy and seed, so the stateful layer is not a deterministic catch; the contracts, "
    "the replay and the traces are. "
)


def _ready(*keys: str) -> tuple[WitnessCall, ...]:
    """One-block entries of ``keys``, allocated in turn, then made ready in turn."""
    return tuple(("alloc", k, 1) for k in keys) + tuple(("mark_ready", k) for k in keys)


#: The catalogue entries (``planted`` assembles them with the others).
BUGS: tuple[PlantedBug, ...] = (
    _contiguity_bug(
        "ContiguityOneTooMany", "EvictBeyondNeedBoundedProp",
        (*_ready("a", "b", "c"), ("alloc", "x", 3)), 5, alloc_evicts_one_too_many,
        catching=("contracts", "replay", "traces"),
        why_blind=WHY_STATEFUL_MISSES_ONE_TOO_MANY + WHY_BLIND,
    ),
    _contiguity_bug(
        "ContiguityDespiteRun", "ExtraEvictionOnlyWithoutRunProp",
        (*_ready("a", "b"), ("alloc", "x", 1)), 3, alloc_evicts_despite_run,
    ),
    _contiguity_bug(
        "ContiguityNever", "ExtraEvictionUntilRunProp",
        (*_ready("a", "b"), ("alloc", "x", 2)), 3, alloc_never_seeks_run,
    ),
    _contiguity_bug(
        "ContiguityExtraNewest", "ContiguityOrderProp",
        (*_ready("a", "b", "c"), ("alloc", "x", 2)), 4, alloc_evicts_newest_extra, "fifo",
    ),
)  # fmt: skip
