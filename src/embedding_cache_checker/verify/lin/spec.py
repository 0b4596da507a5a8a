"""The sequential specification a history is checked against: the transitions, one at a time.

A model state is a fresh ``CacheState`` with the same policy, driven by the
real transition functions (``verification.REAL``) with no lock and no threads:
the cache's behaviour when calls never overlap. The policies are
deterministic, so the same calls in the same order give the same outcomes,
block ids included. States are never mutated once made (a step works on a
clone), so the checker can branch from any of them; each carries a hashable
fingerprint, and steps are memoised on (fingerprint, call).

Leases and the clock. A call is replayed with the clock reading it made
(``Call.reads``), as the cache makes it: ``lease`` and ``renew_lease`` read
the clock always; every other call (``expire_leases`` too) only while the
lease book's heap is not empty, and then first releases the due leases
(deadline < now). A call whose readings are not the ones the cache would
make in the model's state cannot be placed there (``Impossible``), nor can
a reading below one already placed: the cache reads its clock under its
lock, so in the order of its critical sections the readings rise. A lease a
call passes (``LeaseArg``) is the model's lease granted by that call: the
model grants each lease the id ``lease_id(thread, index)`` of its call, so
names do not depend on the order found; once it no longer holds (expired,
released, or never ready) it is passed as a lease of this book that holds
nothing, which is what the real handle is by then.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any, NamedTuple

from embedding_cache import Lease
from embedding_cache.policies import PolicySpec, make_policy
from embedding_cache.verification import REAL, CacheState, LeaseBook, invariants

from ...abstraction import policy_view
from ..replay import clone
from .history import Call, CallOutcome, EntryView, ForeignLease, LeaseArg, Raised, observe

#: Operations that change nothing but may expire leases (they run on a clone then).
QUERIES = frozenset({"get", "has_held_entries", "len", "check"})
#: The handle's methods are the cache's.
ALIASES = {"Lease.release": "release_lease", "Lease.renew": "renew_lease"}
#: The calls that read the clock whatever the state (the others: only while leases are held).
READS_ALWAYS = frozenset({"lease", "renew_lease"})
#: A foreign lease: one another book granted (its key is never looked at).
_FOREIGN = Lease(None, LeaseBook(), -1, "foreign", (), None)


class Impossible(NamedTuple):
    """An outcome no call can have: the call cannot be placed in this state (``reason``)."""

    reason: str


class Node(NamedTuple):
    """A model state, its fingerprint and the last clock reading placed."""

    state: CacheState
    fingerprint: Hashable
    clock: float = -math.inf


def lease_id(thread: int, index: int) -> int:
    """The id the model grants to the lease of call ``index`` of ``thread``. O(1)."""
    return thread * 1_000_000 + index


def fingerprint(s: CacheState) -> Hashable:
    """Everything that decides the outcome of later calls, hashable. O(N + entries log entries).

    The free stack in order (it decides which ids an alloc takes), every entry
    with its pin count and block ids, the evictable-block counter, the
    policy's variables (``PolicyChecks.abstract``, which decides its
    victims), and the lease book: every live lease (id, key, deadline), the
    deadline heap (stale pairs too: they decide whether a call reads the
    clock) and the last expiry time.
    """
    book = s.leases
    return (
        tuple(s.free),
        tuple(sorted((k, e.pin_count, e.block_ids) for k, e in s.entries.items())),
        s.evictable_blocks,
        policy_view(s.checks.abstract()),
        tuple(sorted((i, lease.key, lease.deadline) for i, lease in book.live.items())),
        tuple(sorted(book.heap)),
        book.now,
    )


def _lease_of(s: CacheState, arg: object) -> Any:
    """The object a call passed where a lease goes, as the model has it. O(1)."""
    if isinstance(arg, LeaseArg):
        held = s.leases.live.get(lease_id(*arg))
        return held if held is not None else Lease(None, s.leases, lease_id(*arg), "", (), None)
    if isinstance(arg, ForeignLease):
        return _FOREIGN
    return arg  # not a lease: the transition's TypeError


def apply(s: CacheState, call: Call, now: float | None) -> object:
    """Run ``call`` on ``s`` as the cache's method would, without the lock, at clock ``now``
    (None: the call read no clock; then no lease is held, as the caller checked)."""
    op = ALIASES.get(call.op, call.op)
    if now is not None and op != "expire_leases":
        heap = s.leases.heap
        if heap and heap[0][0] < now:
            REAL.expire_leases(s, now)
    if op == "len":
        return len(s.entries)
    if op == "check":
        invariants.check(s)
        return None
    if op == "expire_leases":
        return [] if now is None else REAL.expire_leases(s, now)
    args: tuple[Any, ...] = call.args  # as the caller passed them: misuse included
    if op == "release_lease":
        return REAL.release_lease(s, _lease_of(s, args[0]))
    if now is None:  # every call left reads the clock (``clock_of``)
        return getattr(REAL, op)(s, *args)
    if op == "lease":
        s.leases.next_id = lease_id(call.thread, call.index)
        return REAL.lease(s, args[0], args[1], now, None)
    if op == "renew_lease":
        return REAL.renew_lease(s, _lease_of(s, args[0]), args[1], now)
    return getattr(REAL, op)(s, *args)


def clock_of(node: Node, call: Call) -> float | Impossible | None:
    """The reading ``call`` used, or why it cannot be placed at ``node``. O(1).

    The cache reads its clock once for a lease or renewal, once for any other
    call while its heap is not empty, else never; and the readings rise.
    """
    op = ALIASES.get(call.op, call.op)
    reads = op in READS_ALWAYS or bool(node.state.leases.heap)
    if len(call.reads) != reads:
        return Impossible(
            f"the cache reads its clock {int(reads)} times here, not {len(call.reads)}"
        )
    if not reads:
        return None
    now = call.reads[0]
    if now < node.clock:
        return Impossible(f"clock reading {now:g} below {node.clock:g}, already placed")
    return now


def agrees(seen: CallOutcome, spec: CallOutcome) -> bool:
    """Whether an observed outcome can be the specification's. O(blocks).

    Exact, except for an entry's ready flag: the caller reads it after the
    call returned, racing any concurrent ``mark_ready`` of that entry, so an
    entry the specification returned not-ready may be seen ready (never the
    other way round: an entry does not go back). The checker then requires
    that entry's ``mark_ready`` to have begun before the caller's read
    (``late_ready``).
    """
    if isinstance(spec, Impossible):
        return False
    return (seen == spec and type(seen) is type(spec)) or late_ready(seen, spec)


def late_ready(seen: CallOutcome, spec: CallOutcome) -> bool:
    """The entry the specification returned not-ready was seen ready. O(blocks)."""
    return (
        isinstance(seen, EntryView)
        and isinstance(spec, EntryView)
        and seen.block_ids == spec.block_ids
        and seen.ready
        and not spec.ready
    )


class SequentialSpec:
    """The cache run one call at a time from empty: the reference for one history.

    ``step`` is O(N + entries) the first time a (state, call) pair is seen
    (a clone, the transition, a fingerprint) and O(1) after.
    """

    def __init__(self, num_blocks: int, policy: PolicySpec = "fifo") -> None:
        state = CacheState(num_blocks, make_policy(policy, num_blocks))
        self.initial = Node(state, (fingerprint(state), -math.inf))
        self._steps: dict[Hashable, tuple[CallOutcome, Node]] = {}

    def step(self, node: Node, call: Call) -> tuple[CallOutcome, Node]:
        """The outcome of ``call`` in ``node`` and the node after it.

        The node's fingerprint is the state's and the last clock reading placed.
        """
        now = clock_of(node, call)
        if isinstance(now, Impossible):
            return now, node
        granted = lease_id(call.thread, call.index) if call.op == "lease" else None
        memo = (node.fingerprint, call.op, call.args, now, granted)
        found = self._steps.get(memo)
        if found is not None:
            return found
        after = node
        query = call.op in QUERIES and now is None  # nothing can change: no clone
        state = node.state if query else clone(node.state)
        try:
            outcome = observe(apply(state, call, now))
        except Exception as exc:
            outcome = Raised(type(exc).__name__)
        if not query:
            clock = node.clock if now is None else now
            after = Node(state, (fingerprint(state), clock), clock)
        self._steps[memo] = (outcome, after)
        return outcome, after
