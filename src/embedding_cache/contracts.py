"""Each operation's icontract contract, condition by named condition.

A condition is a plain function named after what it checks; its description
is the one name (spec/NAMES.md) of the invariant or property it protects, so a
violation reads "EvictableSetInv: mark_ready_joins_evictable: ...". Conditions are
inductive: they compare the state after a transition with an O(1) snapshot
taken before it (``snapshots``), so their cost does not grow with the pool.
(Named functions rather than lambdas: icontract can render a lambda only when
it is written inside a decorator, and these are assembled into values.)

Each operation's contract is a module-level decorator (``alloc_contract``,
...) that ``transitions`` applies to its body and that tests and ``verify``
apply to deliberately broken bodies, to show the contract catches them. In
the default build the decorators return the function unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from . import invariants
from .build import CHECKED, FULL_SWEEP

if CHECKED or TYPE_CHECKING:
    # Only the checked builds need icontract: the default build imports no
    # third-party module (the cache is meant to be vendored).
    try:
        import icontract
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "EMBEDDING_CACHE_CHECKED is set, and the checked build needs icontract: "
            "pip install 'embedding-cache[checked]'"
        ) from exc
from .admission import Outcome
from .contiguity_contracts import (
    alloc_evicts_extra_only_without_run,
    alloc_evicts_extra_until_run,
    alloc_evicts_next_victims,
    alloc_evicts_within_bound,
)
from .entry import NOT_READY, CacheEntry
from .snapshots import (
    AllocPlan,
    Snapshot,
    as_count,
    canonical_ids,
    just_freed,
    plan_alloc,
    same_shape,
    snapshot,
)
from .state import CacheState

F = TypeVar("F", bound=Callable[..., Any])


class Old(Protocol):
    """icontract's OLD: the snapshots taken before the call, by name."""

    pre: Snapshot
    plan: AllocPlan
    door: Any  # the admission filter's snapshot (None without a filter)


def _contract(*decorators: Any) -> Callable[[F], F]:
    """Compose one operation's icontract decorators, plus the full sweep.

    icontract checks postconditions in the order they were attached, so they
    are attached in the listed order (the most specific first), then the
    sweep's, then the snapshots they read and the preconditions.
    """
    if not CHECKED:
        return _unchanged
    posts = [d for d in decorators if isinstance(d, icontract.ensure)]
    others = [d for d in decorators if not isinstance(d, icontract.ensure)]

    def apply(func: F) -> F:
        for decorator in posts:
            func = decorator(func)
        func = _sweep_before_and_after(func)
        for decorator in reversed(others):
            func = decorator(func)
        return func

    return apply


def _unchanged(func: F) -> F:
    """The default build's contract: none."""
    return func


def _sweep_before_and_after(func: F) -> F:
    """In the full build, require and ensure every named invariant (O(N) each)."""
    if not FULL_SWEEP:
        return func
    for name, predicate in invariants.INVARIANTS.items():
        func = icontract.ensure(_holds(predicate), name)(func)
    for name, predicate in reversed(invariants.INVARIANTS.items()):
        func = icontract.require(_holds(predicate), name)(func)
    return func


def _holds(predicate: Callable[[CacheState], str | None]) -> Callable[[CacheState], bool]:
    def holds(s: CacheState) -> bool:
        return predicate(s) is None

    holds.__name__ = holds.__qualname__ = f"{predicate.__name__}_holds"
    return holds


# In the default build the helpers below build nothing (icontract is not even
# imported) and ``_contract`` returns each function unchanged.


def _pre(func: Callable[..., bool], name: str) -> Any:
    return icontract.require(func, name) if CHECKED else None


def _post(func: Callable[..., bool], name: str) -> Any:
    return icontract.ensure(func, name) if CHECKED else None


def order_post(func: Callable[..., bool]) -> Any:
    """A postcondition on the policy's own rule: reported under the running policy's
    order property (EvictOldestFirstProp, EvictLowestPriorityProp, ...)."""
    if not CHECKED:
        return None
    return icontract.ensure(func, "the policy's order property", error=_order_violation)


def _snap(func: Callable[..., Any], name: str) -> Any:
    return icontract.snapshot(func, name=name) if CHECKED else None


def _snap_key(s: CacheState, key: str) -> Snapshot:
    return snapshot(s, key)


# ---------------------------------------------------------------- shared


def evictable_within_entries(s: CacheState) -> bool:
    """Cheap form of EvictableSetInv before a call: no more evictable keys than entries."""
    return s.hooks.evictable_count() <= len(s.entries)


def blocks_and_entries_unchanged(OLD: Old, s: CacheState) -> bool:
    """No block moved and no entry came or went."""
    return len(s.free) == OLD.pre.free_len and len(s.entries) == OLD.pre.entries_len


def _left_set_iff_was_evictable(
    old_pin: int | None, old_evictable_len: int, s: CacheState, key: str
) -> bool:
    left = 1 if old_pin == 0 else 0
    return key not in s.policy and s.hooks.evictable_count() == old_evictable_len - left


def _uncounted_iff_was_evictable(
    old_pin: int | None, old_evictable: int, s: CacheState, key: str
) -> bool:
    blocks = len(s.entries[key].block_ids) if old_pin == 0 else 0
    return s.evictable_blocks == old_evictable - blocks


# ---------------------------------------------------------------- alloc


def _plan(s: CacheState, n_blocks: int) -> AllocPlan | None:
    return plan_alloc(s, n_blocks)


def _snap_door(s: CacheState, key: str) -> Any:
    door = s.admission
    return None if door is None or not isinstance(key, str) else door.snapshot(key)


def alloc_fails_iff_short(OLD: Old, s: CacheState, result: CacheEntry | None) -> bool:
    """None when free + evictable blocks are fewer than n, an entry otherwise; with an
    admission filter a None that is not short is a decline (judged on its own)."""
    if OLD.plan.fails:
        return result is None
    return result is not None or s.admission is not None


def alloc_declines_only_when_evicting(OLD: Old, result: CacheEntry | None) -> bool:
    """A declined alloc (None, not short) would have had to evict: fewer than n free."""
    return result is not None or OLD.plan.fails or OLD.plan.evicts


def alloc_follows_admission_rule(
    OLD: Old, s: CacheState, key: str, result: CacheEntry | None
) -> bool:
    """The admission filter (if any) declined, admitted and remembered by its rule."""
    door = s.admission
    if door is None:
        return True
    outcome: Outcome = (
        "admitted" if result is not None else "failed" if OLD.plan.fails else "declined"
    )
    return door.follows_rule(OLD.door, key, OLD.plan.evicts, outcome) is None


def alloc_leaves_no_live_key_at_door(s: CacheState, key: str, result: CacheEntry | None) -> bool:
    """An admitted key is no longer remembered by the filter (O(1))."""
    door = s.admission
    return result is None or door is None or not door.snapshot(key)[0]


def failed_alloc_changes_nothing(OLD: Old, s: CacheState, result: CacheEntry | None) -> bool:
    """A None result left every counter (and the evictable set's size) as it was."""
    return result is not None or same_shape(snapshot(s), OLD.pre)


def alloc_evicts_policy_victims(OLD: Old, s: CacheState, result: CacheEntry | None) -> bool:
    """The victims are exactly the policy's by its rule (its checks' ``plan_victims``), and the
    policy's state agrees with the plan afterwards (its order property)."""
    if result is None:
        return True
    plan = OLD.plan.victims
    return (
        all(k not in s.entries and k not in s.policy for k in plan.victims)
        and s.hooks.evictable_count() == OLD.pre.evictable_len - len(plan.victims)
        and s.checks.plan_holds(plan)
    )


def _order_violation(s: CacheState) -> Exception:
    """A violation of the running policy's order property, under that property's name."""
    policy = s.policy
    return icontract.ViolationError(
        f"{policy.order_property}: the {policy.name} policy's victims or order broke its rule "
        f"(spec/POLICIES.md); {len(s.entries)} entries, {len(policy)} evictable"
    )


def alloc_evicts_only_needed(OLD: Old, s: CacheState, result: CacheEntry | None) -> bool:
    """Nothing is evicted when enough is free; else dropping the largest victim would
    leave too few blocks (V = {} or some v has free + blocks(V \\ {v}) < n). With
    contiguity the three rules below take its place (spec/SPEC.md section 14)."""
    if result is None or s.contiguity:
        return True
    plan = OLD.plan
    n = len(result.block_ids)
    if not plan.victims.victims:
        return True
    return OLD.pre.free_len < n and (
        OLD.pre.free_len + plan.victim_blocks - plan.largest_victim < n
    )


def alloc_takes_free_or_evicted(OLD: Old, result: CacheEntry | None) -> bool:
    """The new entry's blocks are free ones or evicted ones, never a held entry's."""
    return result is None or result.block_ids == OLD.plan.taken


def alloc_conserves_blocks(
    OLD: Old, s: CacheState, key: str, n_blocks: int, result: CacheEntry | None
) -> bool:
    """n canonical ids left the free pool, the victims' blocks joined it, one entry came."""
    if result is None:
        return True
    n = as_count(n_blocks)  # n_blocks may be any __index__ object; the call accepted it
    return n is not None and (
        canonical_ids(result.block_ids, n, s.num_blocks)
        and len(s.free) == OLD.pre.free_len + OLD.plan.victim_blocks - n
        and len(s.entries) == OLD.pre.entries_len - len(OLD.plan.victims.victims) + 1
        and s.entries.get(key) is result
    )


def alloc_new_entry_not_evictable(s: CacheState, key: str, result: CacheEntry | None) -> bool:
    """The new entry is not-ready, so the policy does not hold it as evictable."""
    return result is None or (result._pin_count == NOT_READY and key not in s.policy)


def alloc_uncounts_victims(OLD: Old, s: CacheState, result: CacheEntry | None) -> bool:
    """The evictable count dropped by exactly the victims' blocks."""
    return result is None or s.evictable_blocks == OLD.pre.evictable - OLD.plan.victim_blocks


alloc_contract = _contract(
    _pre(evictable_within_entries, "EvictableSetInv"),
    _snap(_snap_key, "pre"),
    _snap(_plan, "plan"),
    _snap(_snap_door, "door"),
    _post(alloc_fails_iff_short, "AllocFailsOnlyWhenShortProp"),
    _post(alloc_declines_only_when_evicting, "AllocDeclinesOnlyWhenEvictingProp"),
    _post(alloc_follows_admission_rule, "DoorkeeperRuleProp"),
    _post(alloc_leaves_no_live_key_at_door, "DoorHoldsAbsentKeysInv"),
    _post(failed_alloc_changes_nothing, "FailedAllocUnchangedProp"),
    _post(alloc_evicts_only_needed, "EvictOnlyAsNeededProp"),
    _post(alloc_evicts_within_bound, "EvictBeyondNeedBoundedProp"),
    _post(alloc_evicts_extra_only_without_run, "ExtraEvictionOnlyWithoutRunProp"),
    _post(alloc_evicts_extra_until_run, "ExtraEvictionUntilRunProp"),
    _post(alloc_evicts_next_victims, "ContiguityOrderProp"),
    order_post(alloc_evicts_policy_victims),
    _post(alloc_takes_free_or_evicted, "HeldBlocksStableProp"),
    _post(alloc_conserves_blocks, "BlockConservationInv"),
    _post(alloc_new_entry_not_evictable, "EvictableSetInv"),
    _post(alloc_uncounts_victims, "EvictableCountInv"),
)


# ---------------------------------------------------------------- mark_ready


def mark_ready_joins_evictable(OLD: Old, s: CacheState, key: str) -> bool:
    """The entry is ready+unpinned and the policy holds it as evictable."""
    return (
        s.entries[key]._pin_count == 0
        and key in s.policy
        and s.hooks.evictable_count() == OLD.pre.evictable_len + 1
    )


def joins_where_the_rule_puts_it(OLD: Old, s: CacheState, key: str) -> bool:
    """The policy placed the key that became evictable where its rule says (``joined_ok``)."""
    entry = s.entries.get(key)
    if entry is None or entry._pin_count != 0 or OLD.pre.pin == 0:
        return True  # nothing joined (an unpin that left pins behind)
    return s.checks.joined_ok(key, OLD.pre.evictable_len) is None


def mark_ready_counts_blocks(OLD: Old, s: CacheState, key: str) -> bool:
    """The entry's blocks joined the evictable count."""
    return s.evictable_blocks == OLD.pre.evictable + len(s.entries[key].block_ids)


def mark_ready_moves_no_block(OLD: Old, s: CacheState, key: str) -> bool:
    """No block moved; the entry kept its blocks."""
    return blocks_and_entries_unchanged(OLD, s) and s.entries[key].block_ids == OLD.pre.blocks


mark_ready_contract = _contract(
    _pre(evictable_within_entries, "EvictableSetInv"),
    _snap(_snap_key, "pre"),
    _post(mark_ready_joins_evictable, "EvictableSetInv"),
    order_post(joins_where_the_rule_puts_it),
    _post(mark_ready_counts_blocks, "EvictableCountInv"),
    _post(mark_ready_moves_no_block, "BlockConservationInv"),
)


# ---------------------------------------------------------------- pin


def pin_adds_one(OLD: Old, s: CacheState, key: str) -> bool:
    """The entry's pin count rose by one."""
    return OLD.pre.pin is not None and s.entries[key]._pin_count == OLD.pre.pin + 1


def pin_leaves_evictable(OLD: Old, s: CacheState, key: str) -> bool:
    """The entry is not evictable; it left the evictable set iff it was ready+unpinned."""
    return _left_set_iff_was_evictable(OLD.pre.pin, OLD.pre.evictable_len, s, key)


def pin_uncounts(OLD: Old, s: CacheState, key: str) -> bool:
    """The entry's blocks left the evictable count iff it was ready+unpinned."""
    return _uncounted_iff_was_evictable(OLD.pre.pin, OLD.pre.evictable, s, key)


pin_contract = _contract(
    _pre(evictable_within_entries, "EvictableSetInv"),
    _snap(_snap_key, "pre"),
    _post(pin_adds_one, "TypeOK"),
    _post(pin_leaves_evictable, "EvictableSetInv"),
    _post(pin_uncounts, "EvictableCountInv"),
    _post(blocks_and_entries_unchanged, "BlockConservationInv"),
)


# ---------------------------------------------------------------- pin_if_ready


def pin_if_ready_none_iff_absent(OLD: Old, result: CacheEntry | None) -> bool:
    """None exactly when the key had no entry."""
    return (result is None) == (OLD.pre.pin is None)


def pin_if_ready_leaves_not_ready(OLD: Old, s: CacheState, result: CacheEntry | None) -> bool:
    """A not-ready entry is returned unpinned and nothing changes."""
    return (
        OLD.pre.pin is None
        or OLD.pre.pin >= 0
        or (
            same_shape(snapshot(s), OLD.pre)
            and result is not None
            and result._pin_count == NOT_READY
        )
    )


def pin_if_ready_pins_ready(OLD: Old, s: CacheState, key: str, result: CacheEntry | None) -> bool:
    """A ready entry gains one pin and leaves the evictable set iff it was unpinned."""
    return (
        OLD.pre.pin is None
        or OLD.pre.pin < 0
        or (
            result is not None
            and result._pin_count == OLD.pre.pin + 1
            and _left_set_iff_was_evictable(OLD.pre.pin, OLD.pre.evictable_len, s, key)
        )
    )


def pin_if_ready_uncounts(OLD: Old, s: CacheState, key: str) -> bool:
    """A ready entry's blocks leave the evictable count iff it was unpinned."""
    return (
        OLD.pre.pin is None
        or OLD.pre.pin < 0
        or _uncounted_iff_was_evictable(OLD.pre.pin, OLD.pre.evictable, s, key)
    )


pin_if_ready_contract = _contract(
    _pre(evictable_within_entries, "EvictableSetInv"),
    _snap(_snap_key, "pre"),
    _post(pin_if_ready_none_iff_absent, "TypeOK"),
    _post(pin_if_ready_leaves_not_ready, "MisuseUnchangedProp"),
    _post(pin_if_ready_pins_ready, "EvictableSetInv"),
    _post(pin_if_ready_uncounts, "EvictableCountInv"),
    _post(blocks_and_entries_unchanged, "BlockConservationInv"),
)


# ---------------------------------------------------------------- unpin


def unpin_drops_one(OLD: Old, s: CacheState, key: str) -> bool:
    """The entry's pin count fell by one."""
    return OLD.pre.pin is not None and s.entries[key]._pin_count == OLD.pre.pin - 1


def unpin_rejoins_last(OLD: Old, s: CacheState, key: str) -> bool:
    """The last unpin makes the key evictable again; others leave the evictable set alone."""
    if s.entries[key]._pin_count == 0:
        return key in s.policy and s.hooks.evictable_count() == OLD.pre.evictable_len + 1
    return key not in s.policy and s.hooks.evictable_count() == OLD.pre.evictable_len


def unpin_recounts_last(OLD: Old, s: CacheState, key: str) -> bool:
    """The last unpin adds the entry's blocks to the evictable count."""
    entry = s.entries[key]
    added = len(entry.block_ids) if entry._pin_count == 0 else 0
    return s.evictable_blocks == OLD.pre.evictable + added


unpin_contract = _contract(
    _pre(evictable_within_entries, "EvictableSetInv"),
    _snap(_snap_key, "pre"),
    _post(unpin_drops_one, "TypeOK"),
    _post(unpin_rejoins_last, "EvictableSetInv"),
    order_post(joins_where_the_rule_puts_it),
    _post(unpin_recounts_last, "EvictableCountInv"),
    _post(blocks_and_entries_unchanged, "BlockConservationInv"),
)


# ---------------------------------------------------------------- discard


def discard_frees_blocks(OLD: Old, s: CacheState, key: str) -> bool:
    """The entry is gone and exactly its blocks are back in the free pool (``just_freed``:
    the stack's top, or free extents)."""
    return (
        key not in s.entries
        and len(s.entries) == OLD.pre.entries_len - 1
        and OLD.pre.blocks is not None
        and len(s.free) == OLD.pre.free_len + len(OLD.pre.blocks)
        and just_freed(s, OLD.pre.blocks)
    )


def discard_leaves_evictable(OLD: Old, s: CacheState) -> bool:
    """A not-ready entry was never evictable, so the evictable set and its count are unchanged."""
    return (
        s.hooks.evictable_count() == OLD.pre.evictable_len
        and s.evictable_blocks == OLD.pre.evictable
    )


discard_contract = _contract(
    _pre(evictable_within_entries, "EvictableSetInv"),
    _snap(_snap_key, "pre"),
    _post(discard_frees_blocks, "BlockConservationInv"),
    _post(discard_leaves_evictable, "EvictableSetInv"),
)
