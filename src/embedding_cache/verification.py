"""The verification interface: what a checker may use beyond the public API.

The cache's public API (``embedding_cache.__all__``: ``EmbeddingCache``,
``CacheEntry``, the errors, the registries) is what an engine uses. A
checker -- the package ``embedding_cache_checker`` beside this one, or any
other tool that replays, traces or model-checks the cache -- also needs to
see the plain state behind a cache, to run the transitions on a state of its
own, and to swap a transition for a deliberately broken one. This module is
the one documented place for that; nothing here is needed to *use* the
cache, and the cache never imports it.

**The rule.** The checker, the vLLM plugin and the bench import the runtime
through three doors only: the package itself (a name of
``embedding_cache.__all__``), the policy package ``embedding_cache.policies``
with its policy modules (a policy's module is its interface: its class and
the constants its reference model reads), and this module. Every other
runtime module (``state``, ``cache``, ``entry``, ``admission``, ``build``,
the pools, ...) is reached through here, so this list is the whole of what
they rely on. Nor does anything outside the runtime touch an underscored
attribute of a runtime object (``lease._id``, ``entry._pin_count``): the
accessors below are the way. tests/test_verification_door.py walks every
import, type-only and function-level ones included, and every attribute
access outside the runtime, and holds the rule.

What it offers, each O(1) unless said:

* the cache's parts: ``lock_of(cache)`` (its one lock), ``clock_of(cache)`` and
  ``install_clock(cache, clock)`` (what lease deadlines are read against: how
  tracing records the clock's readings), ``expire_due(cache)`` (the lease expiry
  every public method makes first, for a tool that rewrites a method);
* a lease handle's parts: ``lease_id(lease)``, ``lease_book(lease)`` (the book
  that granted it) and ``set_lease_held(lease, held)`` (a handle built by hand);
  its deadline is public (``Lease.deadline``);
* the state: ``CacheState`` (spec/SPEC.md section 2.2 maps its fields to the
  spec), ``state_of(cache)``, ``has_held_entries(state)``, ``LeaseBook`` (the
  state's leases), ``FreeStack`` (the default free pool, for a state built
  by hand) and ``runs_of`` (ids -> their runs of consecutive ids);
* the admission filters by spec: ``AdmissionSpec`` (what ``admission=``
  takes) and ``make_admission``;
* the transitions: the functions of ``transitions`` (one per operation,
  unlocked, over a ``CacheState``) and of ``lease_transitions`` (the pin
  leases: ``LEASE_OPERATIONS``, over the state's ``LeaseBook``), their table
  ``Transitions`` (``REAL``; ``OPERATIONS`` the core's by name),
  ``transitions_of(cache)`` and ``install_transitions(cache, table)`` (the
  one path tracing and planted bugs take into a cache: the cache's own
  methods still take the lock around every call);
* the building blocks a broken copy of a transition reuses, so that it
  differs from the real one only where its bug is: ``bad_key_error``,
  ``block_count``, ``pin_step``, ``unpin_step``, ``end_lease``,
  ``forget_lease``, ``own_lease``,
  ``evict_until``, ``evict_for_run``, ``evict_one``, ``NOT_READY`` and
  ``set_pin_count(entry, n)`` (the entry's pin count is otherwise read-only);
* the checked build's pieces: ``build`` (which build runs), ``contracts`` and
  ``lease_contracts`` (each operation's contract, as a
  decorator a broken body can wear), ``invariants`` (the named invariants
  and the O(N) sweep), ``snapshots`` (what the contracts compare);
* ``errors``, the module of the typed errors, for a tool that looks one up by name.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from . import (
    build,
    contracts,
    errors,
    invariants,
    lease_contracts,
    lease_transitions,
    snapshots,
    transitions,
)
from .admission import AdmissionSpec, make_admission
from .cache import EmbeddingCache
from .entry import NOT_READY, CacheEntry
from .free_stack import FreeStack
from .lease_transitions import LEASE_OPERATIONS, end_lease, forget_lease, own_lease
from .leases import Lease, LeaseBook
from .runs import runs_of
from .state import CacheState, has_held_entries
from .transition_table import REAL, Transitions
from .transitions import (
    OPERATIONS,
    bad_key_error,
    block_count,
    evict_for_run,
    evict_one,
    evict_until,
    pin_step,
    unpin_step,
)


def state_of(cache: EmbeddingCache) -> CacheState:
    """The plain state behind ``cache``. Read it, or change it, only with the cache's
    lock held or while no other thread uses the cache. O(1)."""
    return cache._state


def lock_of(cache: EmbeddingCache) -> threading.Lock:
    """The lock every public method of ``cache`` holds for its whole call (for tools
    that build a deliberately non-linearizable variant of a method). O(1)."""
    return cache._lock


def transitions_of(cache: EmbeddingCache) -> Transitions:
    """The transition table ``cache``'s methods call under its lock. O(1)."""
    return cache._ops


def install_transitions(cache: EmbeddingCache, table: Transitions) -> None:
    """Make ``cache``'s methods call ``table``'s functions (still under the cache's
    lock): how tracing records and how a planted bug runs inside a real cache. O(1)."""
    cache._ops = table


def clock_of(cache: EmbeddingCache) -> Callable[[], float]:
    """The clock ``cache`` reads lease deadlines against (``clock=`` of its constructor,
    unless ``install_clock`` replaced it). O(1)."""
    return cache._clock


def install_clock(cache: EmbeddingCache, clock: Callable[[], float]) -> None:
    """Make ``cache`` read ``clock`` from now on (a recording wrapper of its own clock,
    as tracing installs; it must never go back). O(1)."""
    cache._clock = clock


def expire_due(cache: EmbeddingCache) -> None:
    """Release ``cache``'s due leases, as every public method does first; hold the
    cache's lock. O(1) when no lease is held, else a clock read and O(log leases)
    per lease released."""
    if cache._heap:
        cache._expire_due()


def lease_id(lease: Lease) -> int:
    """The id ``lease`` has in its book (``LeaseBook.live``'s key while it holds; the
    lease specs' lease object). O(1)."""
    return lease._id


def lease_book(lease: Lease) -> LeaseBook:
    """The book of the state that granted ``lease`` (a lease belongs to one cache). O(1)."""
    return lease._book


def set_lease_held(lease: Lease, held: bool) -> None:
    """Set whether the handle ``lease`` holds its pin: for a handle built by hand (a
    replay's handle of an ended lease) or a broken copy of a transition; the book
    and the entry are not told. O(1)."""
    lease._held = held


def set_pin_count(entry: CacheEntry, count: int) -> None:
    """Set ``entry``'s pin count (``NOT_READY``, 0 or the number of pins): for a
    broken copy of a transition only; the cache's own bookkeeping is not told. O(1)."""
    entry._pin_count = count


__all__ = [
    "LEASE_OPERATIONS",
    "NOT_READY",
    "OPERATIONS",
    "REAL",
    "AdmissionSpec",
    "CacheState",
    "FreeStack",
    "Lease",
    "LeaseBook",
    "Transitions",
    "bad_key_error",
    "block_count",
    "build",
    "clock_of",
    "contracts",
    "end_lease",
    "errors",
    "evict_for_run",
    "evict_one",
    "evict_until",
    "expire_due",
    "forget_lease",
    "has_held_entries",
    "install_clock",
    "install_transitions",
    "invariants",
    "lease_book",
    "lease_contracts",
    "lease_id",
    "lease_transitions",
    "lock_of",
    "make_admission",
    "own_lease",
    "pin_step",
    "runs_of",
    "set_lease_held",
    "set_pin_count",
    "snapshots",
    "state_of",
    "transitions",
    "transitions_of",
    "unpin_step",
]
