"""The named state invariants, as predicates over a CacheState, and the full sweep.

Each predicate returns ``None`` when its invariant holds and a sentence saying
what is wrong otherwise. Names are the ones spec/NAMES.md fixes (and tla/,
the contracts and the tests use). Every predicate is O(N + entries): use
``check`` at test teardown, never on a hot path.
"""

from __future__ import annotations

from collections.abc import Callable

from .errors import InvariantViolationError
from .state import CacheState, has_held_entries


def type_ok(s: CacheState) -> str | None:
    """TypeOK: counters are ints, pin counts >= -1, block_ids canonical tuples in range."""
    n = s.num_blocks
    if type(n) is not int or n < 0:
        return f"num_blocks is {n!r}"
    if type(s.evictable_blocks) is not int or s.evictable_blocks < 0:
        return f"evictable_blocks is {s.evictable_blocks!r}"
    for key, entry in s.entries.items():
        if not isinstance(key, str):  # a str subclass (e.g. numpy.str_) is a str
            return f"key {key!r} is not a str"
        if type(entry._pin_count) is not int or entry._pin_count < -1:
            return f"entry {key!r} has pin count {entry._pin_count!r}"
        ids = entry.block_ids
        if type(ids) is not tuple:
            return f"entry {key!r} block_ids is a {type(ids).__name__}, not a tuple"
        for i, b in enumerate(ids):
            if type(b) is not int or not 0 <= b < n:
                return f"entry {key!r} holds block {b!r}, outside [0, {n})"
            if i and ids[i - 1] >= b:
                return f"entry {key!r} block_ids {ids!r} are not unique and ascending"
    return None


def block_conservation_inv(s: CacheState) -> str | None:
    """BlockConservationInv: every id in [0, N) is free or owned by exactly one entry.

    The free pool's own structure (the extents' index) is checked first: it is
    how ``free`` is represented, and a broken index would hide or invent runs.
    """
    detail = s.free.check()
    if detail is not None:
        return f"the free pool is inconsistent: {detail}"
    seen: dict[int, str] = {}
    for b in s.free:
        if type(b) is not int or not 0 <= b < s.num_blocks:
            return f"free list holds {b!r}, outside [0, {s.num_blocks})"
        if b in seen:
            return f"block {b} is on the free list twice"
        seen[b] = "<free>"
    for key, entry in s.entries.items():
        for b in entry.block_ids:
            if b in seen:
                other = seen[b]
                return f"block {b} is owned by {key!r} and also by {other}"
            seen[b] = repr(key)
    if len(seen) != s.num_blocks:
        lost = sorted(set(range(s.num_blocks)) - set(seen))
        return f"blocks {lost[:10]} are neither free nor owned (leaked)"
    return None


def evictable_set_inv(s: CacheState) -> str | None:
    """EvictableSetInv: the policy holds exactly the ready+unpinned entries, each once,
    and the policy's own invariants hold (its ``PolicyChecks.check``)."""
    seen: set[str] = set()
    for key in s.policy.evictable_keys():
        if key in seen:
            return f"key {key!r} is held twice by the policy"
        seen.add(key)
        entry = s.entries.get(key)
        if entry is None:
            return f"evictable key {key!r} has no live entry"
        if entry._pin_count != 0:
            return f"evictable key {key!r} is {entry.state_name()}, not ready+unpinned"
    if len(seen) != s.hooks.evictable_count():
        return f"the policy counts {s.hooks.evictable_count()} evictable keys but holds {len(seen)}"
    ready = {k: len(e.block_ids) for k, e in s.entries.items() if e._pin_count >= 0}
    evictable = {k: n for k, n in ready.items() if s.entries[k]._pin_count == 0}
    for key in evictable:
        if key not in seen:
            return f"ready+unpinned key {key!r} is missing from the policy"
    return s.checks.check(ready, evictable)


def evictable_count_inv(s: CacheState) -> str | None:
    """EvictableCountInv: the evictable-block counter equals the evictable entries' blocks."""
    total = sum(len(e.block_ids) for e in s.entries.values() if e._pin_count == 0)
    if total != s.evictable_blocks:
        return f"evictable_blocks is {s.evictable_blocks}, evictable entries hold {total}"
    return None


def held_entries_inv(s: CacheState) -> str | None:
    """HeldEntriesInv: has_held_entries() iff some entry is not-ready or pinned."""
    held = any(e._pin_count != 0 for e in s.entries.values())
    if has_held_entries(s) != held:
        return f"has_held_entries() is {not held} but some-entry-held is {held}"
    return None


def quiescence_inv(s: CacheState) -> str | None:
    """QuiescenceInv: with nothing held, free plus evictable blocks are the whole pool."""
    if any(e._pin_count != 0 for e in s.entries.values()):
        return None
    if len(s.free) + s.evictable_blocks != s.num_blocks:
        return (
            f"nothing is held, but free ({len(s.free)}) + evictable ({s.evictable_blocks}) "
            f"!= {s.num_blocks}"
        )
    return None


def lease_pins_inv(s: CacheState) -> str | None:
    """LeasePinsInv: an entry's pin count is its plain pins plus its live leases.

    Every live lease holds one pin of a live, ready entry, is due in the
    deadline heap and is counted once in the per-key tally; so no entry has
    fewer pins than live leases (its plain pins are the rest, never negative).
    """
    book = s.leases
    tally: dict[str, int] = {}
    pairs = set(book.heap)
    for lease_id, held in book.live.items():
        if held._id != lease_id or not held._held or held._book is not book:
            return f"the lease on {held.key!r} (id {lease_id}) is filed under another id or ended"
        if held.key not in s.entries:
            return f"a live lease holds {held.key!r}, which has no live entry"
        if (held._deadline, lease_id) not in pairs:
            return f"the lease on {held.key!r} is missing from the deadline heap"
        tally[held.key] = tally.get(held.key, 0) + 1
    if tally != book.per_key:
        return f"the per-key lease count is {book.per_key!r}, the live leases make {tally!r}"
    for key, leased in tally.items():
        pins = s.entries[key]._pin_count
        if pins < leased:
            return f"entry {key!r} has {pins} pins but {leased} live leases"
    return None


def lease_deadline_inv(s: CacheState) -> str | None:
    """LeaseDeadlineInv: once a call has run, no live lease is past its deadline."""
    for held in s.leases.live.values():
        if held._deadline is None or held._deadline < s.leases.now:
            return (
                f"the lease on {held.key!r} is due (deadline {held._deadline!r} < "
                f"{s.leases.now!r}) but still holds its pin"
            )
    return None


def door_holds_absent_keys_inv(s: CacheState) -> str | None:
    """DoorHoldsAbsentKeysInv: the admission filter (if any) is well formed and
    remembers no live key (spec/SPEC.md section 13). O(door)."""
    door = s.admission
    if door is None:
        return None
    entries = s.entries
    return door.check(entries.__contains__)


#: Every state invariant by its one name, in the order the sweep checks them.
INVARIANTS: dict[str, Callable[[CacheState], str | None]] = {
    "TypeOK": type_ok,
    "BlockConservationInv": block_conservation_inv,
    "EvictableSetInv": evictable_set_inv,
    "EvictableCountInv": evictable_count_inv,
    "HeldEntriesInv": held_entries_inv,
    "QuiescenceInv": quiescence_inv,
    "LeasePinsInv": lease_pins_inv,
    "LeaseDeadlineInv": lease_deadline_inv,
    "DoorHoldsAbsentKeysInv": door_holds_absent_keys_inv,
}


def violations(s: CacheState) -> list[tuple[str, str]]:
    """(name, detail) of every invariant that fails. O(N + entries)."""
    out = []
    for name, predicate in INVARIANTS.items():
        detail = predicate(s)
        if detail is not None:
            out.append((name, detail))
    return out


def check(s: CacheState) -> None:
    """The full sweep: raise InvariantViolationError naming the first broken invariant.

    O(N + entries). Tests call it after every step and at teardown.
    """
    for name, detail in violations(s):
        raise InvariantViolationError(name, detail)
