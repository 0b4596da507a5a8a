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
apply to deliberately broken bodies, to show the contract catches them. They
are built from ``contract_parts`` (shared with ``lease_contracts``); in the
default build the decorators return the function unchanged.
"""

from __future__ import annotations

from typing import Any, Protocol

from .admission import Outcome
from .contiguity_contracts import (
    alloc_evicts_extra_only_without_run,
    alloc_evicts_extra_until_run,
    alloc_evicts_next_victims,
    alloc_evicts_within_bound,
)
from .contract_parts import (
    contract,
    evictable_within_entries,
    left_set_iff_was_evictable,
    order_post,
    post,
    pre,
    snap,
    uncounted_iff_was_evictable,
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


class Old(Protocol):
    """icontract's OLD: the snapshots taken before the call, by name."""

    pre: Snapshot
    plan: AllocPlan
    door: Any  # the admission filter's snapshot (None without a filter)


def _snap_key(s: CacheState, key: str) -> Snapshot:
    return snapshot(s, key)


# ---------------------------------------------------------------- shared


def blocks_and_entries_unchanged(OLD: Old, s: CacheState) -> bool:
    """No block moved and no entry came or went."""
    return len(s.free) == OLD.pre.free_len and len(s.entries) == OLD.pre.entries_len


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


alloc_contract = contract(
    pre(evictable_within_entries, "EvictableSetInv"),
    snap(_snap_key, "pre"),
    snap(_plan, "plan"),
    snap(_snap_door, "door"),
    post(alloc_fails_iff_short, "AllocFailsOnlyWhenShortProp"),
    post(alloc_declines_only_when_evicting, "AllocDeclinesOnlyWhenEvictingProp"),
    post(alloc_follows_admission_rule, "DoorkeeperRuleProp"),
    post(alloc_leaves_no_live_key_at_door, "DoorHoldsAbsentKeysInv"),
    post(failed_alloc_changes_nothing, "FailedAllocUnchangedProp"),
    post(alloc_evicts_only_needed, "EvictOnlyAsNeededProp"),
    post(alloc_evicts_within_bound, "EvictBeyondNeedBoundedProp"),
    post(alloc_evicts_extra_only_without_run, "ExtraEvictionOnlyWithoutRunProp"),
    post(alloc_evicts_extra_until_run, "ExtraEvictionUntilRunProp"),
    post(alloc_evicts_next_victims, "ContiguityOrderProp"),
    order_post(alloc_evicts_policy_victims),
    post(alloc_takes_free_or_evicted, "HeldBlocksStableProp"),
    post(alloc_conserves_blocks, "BlockConservationInv"),
    post(alloc_new_entry_not_evictable, "EvictableSetInv"),
    post(alloc_uncounts_victims, "EvictableCountInv"),
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


mark_ready_contract = contract(
    pre(evictable_within_entries, "EvictableSetInv"),
    snap(_snap_key, "pre"),
    post(mark_ready_joins_evictable, "EvictableSetInv"),
    order_post(joins_where_the_rule_puts_it),
    post(mark_ready_counts_blocks, "EvictableCountInv"),
    post(mark_ready_moves_no_block, "BlockConservationInv"),
)


# ---------------------------------------------------------------- pin


def pin_adds_one(OLD: Old, s: CacheState, key: str) -> bool:
    """The entry's pin count rose by one."""
    return OLD.pre.pin is not None and s.entries[key]._pin_count == OLD.pre.pin + 1


def pin_leaves_evictable(OLD: Old, s: CacheState, key: str) -> bool:
    """The entry is not evictable; it left the evictable set iff it was ready+unpinned."""
    return left_set_iff_was_evictable(OLD.pre.pin, OLD.pre.evictable_len, s, key)


def pin_uncounts(OLD: Old, s: CacheState, key: str) -> bool:
    """The entry's blocks left the evictable count iff it was ready+unpinned."""
    return uncounted_iff_was_evictable(OLD.pre.pin, OLD.pre.evictable, s, key)


pin_contract = contract(
    pre(evictable_within_entries, "EvictableSetInv"),
    snap(_snap_key, "pre"),
    post(pin_adds_one, "TypeOK"),
    post(pin_leaves_evictable, "EvictableSetInv"),
    post(pin_uncounts, "EvictableCountInv"),
    post(blocks_and_entries_unchanged, "BlockConservationInv"),
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
            and left_set_iff_was_evictable(OLD.pre.pin, OLD.pre.evictable_len, s, key)
        )
    )


def pin_if_ready_uncounts(OLD: Old, s: CacheState, key: str) -> bool:
    """A ready entry's blocks leave the evictable count iff it was unpinned."""
    return (
        OLD.pre.pin is None
        or OLD.pre.pin < 0
        or uncounted_iff_was_evictable(OLD.pre.pin, OLD.pre.evictable, s, key)
    )


pin_if_ready_contract = contract(
    pre(evictable_within_entries, "EvictableSetInv"),
    snap(_snap_key, "pre"),
    post(pin_if_ready_none_iff_absent, "TypeOK"),
    post(pin_if_ready_leaves_not_ready, "MisuseUnchangedProp"),
    post(pin_if_ready_pins_ready, "EvictableSetInv"),
    post(pin_if_ready_uncounts, "EvictableCountInv"),
    post(blocks_and_entries_unchanged, "BlockConservationInv"),
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


unpin_contract = contract(
    pre(evictable_within_entries, "EvictableSetInv"),
    snap(_snap_key, "pre"),
    post(unpin_drops_one, "TypeOK"),
    post(unpin_rejoins_last, "EvictableSetInv"),
    order_post(joins_where_the_rule_puts_it),
    post(unpin_recounts_last, "EvictableCountInv"),
    post(blocks_and_entries_unchanged, "BlockConservationInv"),
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


discard_contract = contract(
    pre(evictable_within_entries, "EvictableSetInv"),
    snap(_snap_key, "pre"),
    post(discard_frees_blocks, "BlockConservationInv"),
    post(discard_leaves_evictable, "EvictableSetInv"),
)
