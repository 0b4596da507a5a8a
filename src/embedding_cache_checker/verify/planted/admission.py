"""Planted bugs of admission (spec/SPEC.md section 13), run with the doorkeeper.

NEVER used by the cache. Two are copies of ``transitions.alloc`` with one
plausible mistake, wearing the real alloc contract; one is a broken
doorkeeper (a subclass whose ``declined`` forgets), judged by the real
doorkeeper's rule, which it inherits. The same mistakes as the TLA+ bug
models of tla/admission/ (linked by ``tla_model``). Shared bugs: the filter
talks to the policy through nothing, so each is a bug under every policy.

The contracts catch all three (the checked builds; ``run_witness``), and so
do trace validation (a trace recorded with the doorkeeper is checked against
tla/admission/'s rule, its door included: tla/trace's ``RuleTakes`` and
``RuleReturnsNone``), the stateful machine (its reference model keeps the
door and declines as section 13 says; tests/test_stateful.py) and the
state-graph replay (each policy's MCReplayAdmission<Policy>: its
``AllocDecline`` edges and its door, compared as the TLA+ variable ``door``).
CrossHair does not drive admission yet (``WHY_BLIND``).
"""

from __future__ import annotations

from embedding_cache import CacheEntry, Doorkeeper
from embedding_cache.verification import CacheState, contracts, evict_until, transitions

from .bug import LAYERS, Kind, PlantedBug, WitnessCall
from .core import _alloc_checks, _raises_like, _take

#: The layers that catch admission bugs; the others are blind to them (for now).
CATCHING = ("contracts", "stateful", "replay", "traces")
#: Why the other layers are blind to admission bugs (for now).
WHY_BLIND = (
    "admission is driven through the contracts, the stateful machine, the replay and the "
    "traces so far: CrossHair builds states without a filter; the TLA+ bug models of "
    "tla/admission/ plant the same mistakes"
)


@contracts.alloc_contract
@_raises_like(transitions.alloc)
def alloc_declines_without_evicting(s: CacheState, key: str, n_blocks: int) -> CacheEntry | None:
    """PLANTED BUG (DeclinesWithoutEvicting): the filter is asked before the free blocks
    are counted, so a first-seen key is declined though nothing would be evicted."""
    n_blocks = _alloc_checks(s, key, n_blocks)
    if len(s.free) + s.evictable_blocks < n_blocks:
        return None
    door = s.admission
    if door is not None and door.declines(key):  # the bug: asked even when enough is free
        door.declined(key)
        return None
    if len(s.free) < n_blocks:
        evict_until(s, n_blocks)
    return _take(s, key, n_blocks)


@contracts.alloc_contract
@_raises_like(transitions.alloc)
def alloc_keeps_door(s: CacheState, key: str, n_blocks: int) -> CacheEntry | None:
    """PLANTED BUG (AdmitKeepsDoor): an admitted key is never taken off the door, so once
    evicted it is let in again without the doorkeeper's second look."""
    n_blocks = _alloc_checks(s, key, n_blocks)
    if len(s.free) < n_blocks:
        if len(s.free) + s.evictable_blocks < n_blocks:
            return None
        door = s.admission
        if door is not None and door.declines(key):
            door.declined(key)
            return None
        evict_until(s, n_blocks)
    return _take(s, key, n_blocks, tell_filter=False)  # the bug: the door is not told


class DoorkeeperForgets(Doorkeeper):
    """PLANTED BUG (ForgetsDoor): a decline does not remember its key, so the key's
    second request is declined again, and every later one."""

    __slots__ = ()

    def declined(self, key: str) -> None:
        """The bug: nothing is remembered."""


def _admission_bug(
    name: str,
    expect: tuple[str, ...],
    witness: tuple[WitnessCall, ...],
    tla: str,
    *,
    body: object = None,
    broken: type[Doorkeeper] | None = None,
) -> PlantedBug:
    kind: Kind = "transition" if broken is None else "admission"
    return PlantedBug(
        name, None, kind, witness[-1][0], frozenset(expect), tla, witness, 3,
        body=body,  # type: ignore[arg-type]
        blind=frozenset(layer for layer in LAYERS if layer not in CATCHING),
        why_blind=WHY_BLIND,
        admission=Doorkeeper.name,
        broken_admission=broken,
    )  # fmt: skip


#: A ready three-block entry 'a' filling the pool: every later alloc would evict.
READY_FULL: tuple[WitnessCall, ...] = (("alloc", "a", 3), ("mark_ready", "a"))

#: The catalogue entries (``planted`` assembles them with the others).
BUGS: tuple[PlantedBug, ...] = (
    _admission_bug(
        "DeclinesWithoutEvicting", ("AllocDeclinesOnlyWhenEvictingProp",),
        (("alloc", "a", 1),), "MCBugAdmissionDeclinesWithoutEvicting",
        body=alloc_declines_without_evicting,
    ),
    _admission_bug(
        "ForgetsDoor", ("DoorkeeperRuleProp",),
        (*READY_FULL, ("alloc", "b", 1)), "MCBugAdmissionForgetsDoor",
        broken=DoorkeeperForgets,
    ),
    _admission_bug(
        "AdmitKeepsDoor", ("DoorHoldsAbsentKeysInv", "DoorkeeperRuleProp"),
        (*READY_FULL, ("alloc", "b", 1), ("alloc", "b", 1)), "MCBugAdmissionKeepsDoor",
        body=alloc_keeps_door,
    ),
)  # fmt: skip
