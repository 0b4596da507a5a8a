"""The parts every contract module builds its contracts from.

``contracts`` (the core operations), ``lease_contracts`` (the lease
operations) and the conditions they share import these; nothing here names
an operation. The parts: ``contract`` composes one operation's decorators
(plus, in the full build, the O(N) sweep of every named invariant before and
after); ``pre``, ``post``, ``order_post`` and ``snap`` make icontract's
decorators; and the conditions more than one module checks. In the default
build icontract is not even imported, the decorator makers build nothing
and ``contract`` returns each function unchanged. Each part is O(1) to
build; a condition's cost is on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from . import invariants
from .build import CHECKED, FULL_SWEEP
from .state import CacheState

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

F = TypeVar("F", bound=Callable[..., Any])


def contract(*decorators: Any) -> Callable[[F], F]:
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


# ---------------------------------------------------------------- decorator makers


def pre(func: Callable[..., bool], name: str) -> Any:
    """A precondition reported under ``name`` (the invariant or property it protects)."""
    return icontract.require(func, name) if CHECKED else None


def post(func: Callable[..., bool], name: str) -> Any:
    """A postcondition reported under ``name``."""
    return icontract.ensure(func, name) if CHECKED else None


def order_post(func: Callable[..., bool]) -> Any:
    """A postcondition on the policy's own rule: reported under the running policy's
    order property (EvictOldestFirstProp, EvictLowestPriorityProp, ...)."""
    if not CHECKED:
        return None
    return icontract.ensure(func, "the policy's order property", error=_order_violation)


def _order_violation(s: CacheState) -> Exception:
    """A violation of the running policy's order property, under that property's name."""
    policy = s.policy
    return icontract.ViolationError(
        f"{policy.order_property}: the {policy.name} policy's victims or order broke its rule "
        f"(spec/POLICIES.md); {len(s.entries)} entries, {len(policy)} evictable"
    )


def snap(func: Callable[..., Any], name: str) -> Any:
    """A snapshot taken before the call, read by the postconditions as ``OLD.<name>``."""
    return icontract.snapshot(func, name=name) if CHECKED else None


# ---------------------------------------------------------------- shared conditions


def evictable_within_entries(s: CacheState) -> bool:
    """Cheap form of EvictableSetInv before a call: no more evictable keys than entries. O(1)."""
    return s.hooks.evictable_count() <= len(s.entries)


def left_set_iff_was_evictable(
    old_pin: int | None, old_evictable_len: int, s: CacheState, key: str
) -> bool:
    """``key`` is out of the evictable set, which lost one member iff ``key`` was in it
    (``old_pin == 0``): a pin's or a lease's effect on the set. O(1)."""
    left = 1 if old_pin == 0 else 0
    return key not in s.policy and s.hooks.evictable_count() == old_evictable_len - left


def uncounted_iff_was_evictable(
    old_pin: int | None, old_evictable: int, s: CacheState, key: str
) -> bool:
    """The evictable-block counter lost ``key``'s blocks iff ``key`` was evictable. O(1)."""
    blocks = len(s.entries[key].block_ids) if old_pin == 0 else 0
    return s.evictable_blocks == old_evictable - blocks


__all__ = [
    "contract",
    "evictable_within_entries",
    "left_set_iff_was_evictable",
    "order_post",
    "post",
    "pre",
    "snap",
    "uncounted_iff_was_evictable",
]
