"""The spec's action properties, as predicates over one transition the code made.

TLC checks each action property (``[][A]_vars``, spec/NAMES.md) on every
transition of a model. Here the same properties judge a transition of the code
(``CodeTransition``): the state before it (a copy), the call, what it returned or
raised, and the state after it. Each predicate transcribes its TLA+ definition
(tla/core/EmbeddingCache.tla) over the code's whole state, block ids included,
and returns None when it holds, else a sentence saying what is wrong; a
transition it does not concern (an alloc property on a pin) holds vacuously.

The policy's order property (fifo's ``EvictOldestFirstProp``, ...) is judged
by the policy's own statement of its rule, the verification half of
``EvictionPolicy``: the victims ``plan_victims`` names, the state
``plan_holds`` expects after them, where ``joined_ok`` says a joining
key goes, and what ``used_ok`` says a use may change. (A planted broken
policy inherits that half from the real one.)

Unlike the contracts (inductive, O(1) per call, checked builds only), these
compare whole states: O(N + entries) per transition, in any build, for tests that
replay a sequence of calls (``embedding_cache_checker.verify.counterexample_replay``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from embedding_cache import CacheError
from embedding_cache.verification import CacheState

from ..abstraction import policy_view


@dataclass(frozen=True)
class CodeTransition:
    """One call the code made: the states around it and its outcome.

    ``before`` must be a copy taken before the call (``CacheState.copy``);
    ``after`` may be the live state, read right after the call.
    """

    op: str  # alloc, mark_ready, pin, pin_if_ready, unpin, discard
    key: str
    n: int  # alloc's block count (0 for the others)
    before: CacheState
    after: CacheState
    result: object  # what the call returned (None when it raised)
    error: BaseException | None = None

    @property
    def allocated(self) -> bool:
        """An alloc that returned an entry (the spec's ``Alloc``). O(1)."""
        return self.op == "alloc" and self.error is None and self.result is not None

    @property
    def failed_alloc(self) -> bool:
        """An alloc that returned None (the spec's ``AllocFail``). O(1)."""
        return self.op == "alloc" and self.error is None and self.result is None


TransitionPredicate = Callable[[CodeTransition], str | None]


def _blocks(s: CacheState, key: str) -> tuple[int, ...]:
    return s.entries[key].block_ids


def _evictable(s: CacheState) -> dict[str, int]:
    """E: the ready, unpinned live keys -> their block counts (from the entries, not the
    policy or the counter). O(entries)."""
    return {k: len(e.block_ids) for k, e in s.entries.items() if e.pin_count == 0}


def evicted(transition: CodeTransition) -> tuple[str, ...]:
    """The victims of an alloc that returned an entry: the keys live before and not
    after (the spec's ``Evicted``), sorted; () for any other transition. O(entries)."""
    if not transition.allocated:
        return ()
    return tuple(sorted(k for k in transition.before.entries if k not in transition.after.entries))


def observed(s: CacheState) -> tuple[Any, ...]:
    """Everything a transition may change: entries (pins, block ids), the free ids, the
    evictable-block counter and the policy's variables. O(N + entries + the policy)."""
    return (
        tuple(sorted((k, e.pin_count, e.block_ids) for k, e in s.entries.items())),
        tuple(sorted(s.free)),
        s.evictable_blocks,
        policy_view(s.checks.abstract()),
    )


def evict_only_as_needed(transition: CodeTransition) -> str | None:
    """EvictOnlyAsNeededProp: an alloc evicts only evictable entries, nothing when enough
    is free, enough, and no more than needed (some victim could not have been spared)."""
    victims = evicted(transition)
    if not victims:
        return None
    free, n, before = len(transition.before.free), transition.n, transition.before
    evictable = _evictable(before)
    held = [v for v in victims if v not in evictable]
    if held:
        return f"evicted {held}, which were not evictable"
    if free >= n:
        return f"evicted {list(victims)} though {free} blocks were free for {n}"
    total = sum(evictable[v] for v in victims)
    if free + total < n:
        return f"evicted {list(victims)} ({total} blocks) with {free} free: short of {n}"
    if all(free + total - evictable[v] >= n for v in victims):
        return (
            f"evicted {list(victims)} ({total} blocks) with {free} free for {n}: "
            "one of them could have stayed"
        )
    return None


def failed_alloc_unchanged(transition: CodeTransition) -> str | None:
    """FailedAllocUnchangedProp: an alloc that returns None changes nothing."""
    if transition.failed_alloc and observed(transition.after) != observed(transition.before):
        return "alloc returned None but changed the cache"
    return None


def alloc_fails_only_when_short(transition: CodeTransition) -> str | None:
    """AllocFailsOnlyWhenShortProp: an alloc returns None iff free + evictable blocks < n
    (evictable blocks counted from E itself, not from the counter)."""
    if not (transition.allocated or transition.failed_alloc):
        return None
    free, reserve = len(transition.before.free), sum(_evictable(transition.before).values())
    short = free + reserve < transition.n
    if transition.failed_alloc and not short:
        return f"returned None though free {free} + evictable {reserve} >= {transition.n}"
    if transition.allocated and short:
        return f"allocated though free {free} + evictable {reserve} < {transition.n}"
    return None


def held_blocks_stable(transition: CodeTransition) -> str | None:
    """HeldBlocksStableProp: a pinned or not-ready entry keeps its blocks while live, a
    pinned one stays live, and no other entry is handed any of its blocks."""
    before, after = transition.before, transition.after
    for key, entry in before.entries.items():
        if entry.pin_count == 0:
            continue
        ids = set(entry.block_ids)
        if key in after.entries and _blocks(after, key) != entry.block_ids:
            return f"held {key!r} went from blocks {entry.block_ids} to {_blocks(after, key)}"
        if entry.pin_count > 0 and key not in after.entries:
            return f"pinned {key!r} ({entry.pin_count} pins) is gone"
        for other in after.entries:
            if other != key and ids & set(_blocks(after, other)):
                return f"{other!r} was handed blocks of held {key!r}"
    return None


def misuse_unchanged(transition: CodeTransition) -> str | None:
    """MisuseUnchangedProp: an operation that raises leaves the cache as it was, and
    raises a typed error (``CacheError``)."""
    if transition.error is None:
        return None
    if not isinstance(transition.error, CacheError):
        return (
            f"raised {type(transition.error).__name__}, not a typed CacheError: {transition.error}"
        )
    if observed(transition.after) != observed(transition.before):
        return f"raised {type(transition.error).__name__} but changed the cache"
    return None


def order_kept(transition: CodeTransition) -> str | None:
    """The policy's order property (``EvictionPolicy.order_property``): an alloc's victims
    are the ones the rule names and the policy ends as the rule says; a key that becomes
    evictable (mark_ready, the last unpin) joins where the rule puts it; a use (a pin
    that took) changes the policy only as the rule says (``used_ok``)."""
    before, after = transition.before, transition.after
    if transition.allocated:
        free = len(before.free)
        if free + sum(_evictable(before).values()) < transition.n:
            return None  # AllocFailsOnlyWhenShortProp's to report: the rule has no victims
        plan = before.checks.plan_victims(free, transition.n, lambda k: len(_blocks(before, k)))
        victims = evicted(transition)
        if set(victims) != set(plan.victims):
            return f"evicted {list(victims)}; the {before.policy.name} rule evicts {plan.victims}"
        if not after.checks.plan_holds(plan):
            return f"after evicting {list(victims)} the policy disagrees with its rule"
        return None
    if transition.op in ("pin", "pin_if_ready") and transition.error is None:
        old, new = before.entries.get(transition.key), after.entries.get(transition.key)
        if old is not None and new is not None and new.pin_count > old.pin_count:
            problem = after.checks.used_ok(transition.key, before.policy)
            if problem is not None:
                return (
                    f"the use of {transition.key!r} broke the {before.policy.name} rule: {problem}"
                )
        return None
    if transition.op in ("mark_ready", "unpin") and transition.error is None:
        was = before.entries[transition.key].pin_count
        now = after.entries[transition.key].pin_count
        if was != 0 and now == 0:
            problem = after.checks.joined_ok(transition.key, len(before.policy))
            if problem is not None:
                return f"{transition.key!r} joined the evictable set wrongly: {problem}"
    return None


#: The action properties every policy keeps, by their one name (spec/NAMES.md).
TRANSITION_PROPERTIES: dict[str, TransitionPredicate] = {
    "EvictOnlyAsNeededProp": evict_only_as_needed,
    "FailedAllocUnchangedProp": failed_alloc_unchanged,
    "AllocFailsOnlyWhenShortProp": alloc_fails_only_when_short,
    "HeldBlocksStableProp": held_blocks_stable,
    "MisuseUnchangedProp": misuse_unchanged,
}
