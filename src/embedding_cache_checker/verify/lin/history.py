"""Concurrent histories: many threads call one cache; each call's interval and outcome is recorded.

A *history* is what a linearizability checker reads: for every call, the
thread that made it, the operation and its arguments, the invocation and
response times (``time.perf_counter_ns`` just before the call and just after
it returned or raised) and the outcome, normalised so it can be compared with
the sequential specification's (``CallOutcome``). Nothing here takes the cache's
lock or looks inside it: the calls are the public methods, as a client makes
them.

``record_history`` runs a *plan* (each thread's list of calls, fixed in
advance, misuse included) with the interpreter's switch interval at 1 us,
all threads released together by a barrier: the interpreter then switches
threads every few bytecodes, inside calls, so many calls overlap another
thread's call, more in the fully checked build (``overlaps`` counts them; how
many: docs/MEASURED.md, "Linearizability: the mutant budget"); at the default
5 ms interval almost none would. The barrier is outside the timed intervals.

Leases. The cache reads its clock inside a call, under its lock, so the
``now`` a lease call used is not visible from outside. Every history runs on
a ``SteppingClock``: a fake clock that advances by a fixed step at each read,
under its own lock, and keeps each thread's readings; the recorder takes the
readings a call made and stores them with the call (``Call.reads``). The
sequential specification replays each call with the reading it saw (and
requires the readings to rise along the order it finds). A lease is passed
to later calls by reference (``LeaseArg``: the call of this thread that
granted it), so a history names its leases without holding them.
"""

from __future__ import annotations

import random
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from embedding_cache import CacheEntry, EmbeddingCache, Lease


class EntryView(NamedTuple):
    """A returned ``CacheEntry`` as its caller saw it just after the call."""

    block_ids: tuple[int, ...]
    ready: bool


class ReturnedLease(NamedTuple):
    """A returned ``Lease`` as its caller saw it just after the call.

    Not ``held``: another thread's call may expire the lease before the
    caller reads it; ``deadline`` changes only through a renewal, and only
    the granting thread renews its leases here.
    """

    key: str
    block_ids: tuple[int, ...]
    ready: bool
    deadline: float | None


class Raised(NamedTuple):
    """A call that raised: the exception's class name."""

    error: str


class LeaseArg(NamedTuple):
    """A lease passed to a call: the one that call number ``call`` of thread ``thread`` returned.

    In a plan, a negative ``call`` names the thread's leases granted so far
    from the last (-1: the latest); the recorded call has the granting call's index.
    """

    thread: int
    call: int


class ForeignLease(NamedTuple):
    """A lease passed to a call that another cache granted (misuse: ForeignLeaseError)."""


#: A call's normalised result: None, a bool (has_held_entries, release, renew),
#: an int (len), an entry, a lease, the keys expire_leases released, or the
#: error it raised.
CallOutcome = EntryView | ReturnedLease | Raised | tuple[str, ...] | bool | int | None

#: Every operation a plan may call: the public methods (``len`` is ``__len__``).
OPERATIONS: tuple[str, ...] = (
    "alloc",
    "mark_ready",
    "pin",
    "pin_if_ready",
    "unpin",
    "discard",
    "get",
    "has_held_entries",
    "len",
    "check",
    "lease",
    "release_lease",
    "Lease.release",
    "renew_lease",
    "Lease.renew",
    "expire_leases",
)

#: The lease calls (grant, release, renew, expire), as a report counts them.
LEASE_OPERATIONS = frozenset(
    {"lease", "release_lease", "Lease.release", "renew_lease", "Lease.renew", "expire_leases"}
)
#: The operations whose first argument is a lease (``LeaseArg``, ``ForeignLease`` or a
#: non-Lease); ``Lease.release``/``Lease.renew`` are the handle's methods, the others
#: the cache's.
LEASE_TAKING = frozenset({"release_lease", "Lease.release", "renew_lease", "Lease.renew"})

#: How often a random plan picks each operation (the state-changing ones most).
WEIGHTS: dict[str, int] = {
    "alloc": 5,
    "mark_ready": 4,
    "pin": 2,
    "pin_if_ready": 5,
    "unpin": 5,
    "discard": 2,
    "get": 1,
    "has_held_entries": 1,
    "len": 1,
    "check": 1,
    "lease": 5,
    "release_lease": 3,
    "Lease.release": 3,
    "renew_lease": 1,
    "Lease.renew": 1,
    "expire_leases": 1,
}

#: How long a planned lease lasts, in clock steps (before its unique fraction,
#: ``random_plan``): from due at the next read to outliving most histories.
LEASE_STEPS = (0, 1, 2, 4, 8, 16, 64)
#: Seconds a lease or renewal call may get that the cache must refuse.
BAD_SECONDS: tuple[object, ...] = (-1.0, float("inf"), "5", True)


class SteppingClock:
    """A fake clock that advances by ``step`` at every read, under its own lock.

    Each thread's readings are kept (``take`` returns and clears the calling
    thread's), so a history can say which ``now`` each call used. The cache
    reads it under its lock, so the readings rise in the order of the calls'
    critical sections. O(1) per read.
    """

    def __init__(self, step: float = 1.0, start: float = 0.0) -> None:
        self.step = step
        self._now = start
        self._lock = threading.Lock()
        self._local = threading.local()

    def __call__(self) -> float:
        with self._lock:
            self._now += self.step
            now = self._now
        reads: list[float] | None = getattr(self._local, "reads", None)
        if reads is None:
            self._local.reads = reads = []
        reads.append(now)
        return now

    def take(self) -> tuple[float, ...]:
        """The calling thread's readings since its last ``take``, oldest first. O(readings)."""
        reads: list[float] | None = getattr(self._local, "reads", None)
        if not reads:
            return ()
        self._local.reads = []
        return tuple(reads)


class Invocation(NamedTuple):
    """One planned call: the operation and its arguments."""

    op: str
    args: tuple[object, ...]


#: Each thread's calls, in order.
Plan = Sequence[Sequence[Invocation]]


@dataclass(frozen=True, slots=True)
class Call:
    """One completed call of a history."""

    thread: int  # index of the calling thread in the plan
    op: str
    args: tuple[object, ...]
    invoked: int  # perf_counter_ns just before the call
    returned: int  # perf_counter_ns just after it returned or raised
    outcome: CallOutcome
    #: perf_counter_ns once the caller had read the outcome (an entry's ready
    #: flag is read after the call returned); 0 means ``returned``.
    observed: int = 0
    #: The clock readings the call made (the cache reads it at most once a call).
    reads: tuple[float, ...] = ()
    #: The call's place in its thread's program (what a ``LeaseArg`` names).
    index: int = 0

    @property
    def read_by(self) -> int:
        """When the caller had finished reading the outcome."""
        return max(self.returned, self.observed)

    def __str__(self) -> str:
        return self.describe(0)

    def describe(self, origin: int) -> str:
        """One line: thread, call, outcome and interval in microseconds after ``origin`` (ns)."""
        args = ", ".join(repr(a) for a in self.args)
        span = f"[{(self.invoked - origin) / 1000:.1f}, {(self.returned - origin) / 1000:.1f}] us"
        clock = f" now={', '.join(f'{r:g}' for r in self.reads)}" if self.reads else ""
        return f"t{self.thread}#{self.index}: {self.op}({args}) -> {self.outcome!r} {span}{clock}"


@dataclass(frozen=True)
class History:
    """A recorded history and how the run ended."""

    calls: tuple[Call, ...]  # per thread in program order, threads one after another
    threads: int
    #: The full invariant sweep on the cache after the run: None if it passed,
    #: else what it raised.
    sweep_error: str | None
    #: The OS thread id of each plan thread.
    idents: tuple[int, ...] = ()


def overlaps(calls: Sequence[Call]) -> tuple[int, int]:
    """(pairs of calls of different threads that overlap in time, calls that overlap some other).

    How concurrent a history really is. O(C log C + overlapping pairs).
    """
    order = sorted(calls, key=lambda c: c.invoked)
    pairs = 0
    touched: set[int] = set()
    for i, a in enumerate(order):
        for j in range(i + 1, len(order)):
            b = order[j]
            if b.invoked >= a.returned:
                break
            if b.thread != a.thread:
                pairs += 1
                touched.update((i, j))
    return pairs, len(touched)


def observe(value: object) -> CallOutcome:
    """A call's result as a comparable value. O(blocks of the entry)."""
    if isinstance(value, CacheEntry):
        return EntryView(tuple(value.block_ids), value.ready)
    if isinstance(value, Lease):
        return ReturnedLease(value.key, tuple(value.block_ids), value.ready, value.deadline)
    if isinstance(value, list) and all(isinstance(k, str) for k in value):
        return tuple(value)
    if value is None or isinstance(value, (bool, int)):
        return value
    return Raised(f"returned a {type(value).__name__}")


def invoke(cache: EmbeddingCache, op: str, args: tuple[object, ...]) -> object:
    """Call public method ``op`` of ``cache`` (``len`` is ``len(cache)``; ``Lease.release``
    and ``Lease.renew`` are the handle's methods, the lease being the first argument)."""
    if op == "len":
        return len(cache)
    if op == "Lease.release":
        return args[0].release()  # type: ignore[attr-defined]
    if op == "Lease.renew":
        return args[0].renew(*args[1:])  # type: ignore[attr-defined]
    return getattr(cache, op)(*args)


def random_plan(
    rng: random.Random, threads: int, ops_per_thread: int, keys: int, num_blocks: int
) -> list[list[Invocation]]:
    """Each thread's calls, drawn by ``WEIGHTS`` on ``keys`` shared keys. O(threads * ops).

    No call is kept legal: unpin of an unpinned entry, mark_ready twice,
    discard of a ready entry, duplicate alloc, pin of an absent key, alloc of
    more blocks than the pool all happen, and each must raise its typed error
    as the sequential specification says. So do the lease calls' misuse: bad
    seconds (``BAD_SECONDS``), a lease of another cache, a non-Lease (a key,
    or None where no lease was granted). A lease call's ``LeaseArg`` names an
    earlier lease call of its own thread (a thread renews and releases its own
    leases; any thread's call may expire them): the latest or the one before,
    chosen when the call is made among the leases the thread holds handles of
    (a lease call is planned first in a thread in place of one that takes a lease).

    Every well-formed lease or renewal lasts ``LEASE_STEPS`` clock steps plus
    a fraction unique to the call (j / 1024): no two deadlines are equal, so
    the order in which expiry releases leases, which the policies see, is
    decided by the deadlines alone.

    Raises:
        ValueError: more than 1,023 calls in all (the fractions would repeat).
    """
    if threads * ops_per_thread >= 1024:
        raise ValueError(f"random_plan: at most 1,023 calls, not {threads * ops_per_thread}")
    names = [f"k{i}" for i in range(keys)]
    ops = list(WEIGHTS)
    weights = [WEIGHTS[op] for op in ops]
    sizes = [0, 1, 1, 2, 2, 3, num_blocks + 1]
    plan: list[list[Invocation]] = []
    for t in range(threads):
        calls: list[Invocation] = []

        def seconds(j: int) -> object:
            if rng.random() < 0.1:
                return rng.choice(BAD_SECONDS)
            return rng.choice(LEASE_STEPS) + j / 1024

        def handle(op: str, t: int = t) -> object:
            roll = rng.random()
            if op.startswith("Lease.") or roll < 0.8:
                return LeaseArg(t, -1 - (roll < 0.3))
            return ForeignLease() if roll < 0.9 else rng.choice(names)

        leased = False  # a lease call is planned before this one
        for i, op in enumerate(rng.choices(ops, weights, k=ops_per_thread)):
            j = t * ops_per_thread + i + 1
            if op in LEASE_TAKING and not leased:
                op = "lease"  # a thread's first lease call grants one
            leased = leased or op == "lease"
            if op in ("has_held_entries", "len", "check", "expire_leases"):
                calls.append(Invocation(op, ()))
            elif op == "alloc":
                calls.append(Invocation(op, (rng.choice(names), rng.choice(sizes))))
            elif op == "lease":
                calls.append(Invocation(op, (rng.choice(names), seconds(j))))
            elif op in ("renew_lease", "Lease.renew"):
                calls.append(Invocation(op, (handle(op), seconds(j))))
            elif op in LEASE_TAKING:
                calls.append(Invocation(op, (handle(op),)))
            else:
                calls.append(Invocation(op, (rng.choice(names),)))
        plan.append(calls)
    return plan


def foreign_lease() -> Lease:
    """A held lease of another cache (of one block), for the misuse calls. O(1)."""
    other = EmbeddingCache(1, clock=lambda: 0.0)
    other.alloc("foreign", 1)
    other.mark_ready("foreign")
    granted = other.lease("foreign", 1e9)
    assert granted is not None
    return granted


def record_history(
    cache: EmbeddingCache,
    plan: Plan,
    *,
    clock: SteppingClock | None = None,
    switch_interval: float = 1e-6,
) -> History:
    """Run ``plan`` on ``cache``, one thread per entry, and record every call.

    ``clock`` is the cache's clock (``EmbeddingCache(..., clock=clock)``):
    each call's readings of it are recorded (none without it). A
    ``LeaseArg`` becomes the lease that call returned (a negative index: the
    thread's leases from the last; recorded with the granting call's index),
    or None when there is none (recorded as None); a ``ForeignLease`` becomes
    a lease of another cache. A ``Lease.release``/``Lease.renew`` whose
    argument is no lease is made as the cache's ``release_lease``/
    ``renew_lease`` (and recorded so). All threads start together at a
    barrier. The interpreter's switch interval is ``switch_interval`` for the
    run and restored after it. Every call's
    exception is recorded, not raised. The run ends with the full invariant
    sweep (``cache.check()``), whose failure is recorded in ``sweep_error``.
    O(total calls) plus the calls themselves.

    Raises:
        RuntimeError: a thread died of something other than an ``Exception``
            from the cache (e.g. a broken barrier).
    """
    n = len(plan)
    barrier = threading.Barrier(max(n, 1))
    logs: list[list[Call]] = [[] for _ in range(n)]
    idents = [0] * n
    failures: list[BaseException] = []
    ns = time.perf_counter_ns
    other = foreign_lease()
    take: Callable[[], tuple[float, ...]] = clock.take if clock is not None else tuple

    def run(t: int) -> None:
        log = logs[t]
        idents[t] = threading.get_ident()
        granted: list[tuple[int, Lease]] = []  # (index of the granting call, its lease)
        try:
            barrier.wait()
            for index, (op, planned) in enumerate(plan[t]):
                args = list(planned)
                passed = list(planned)
                if op in LEASE_TAKING:
                    ref = planned[0]
                    if isinstance(ref, LeaseArg):
                        found = [g for g in granted if g[0] == ref.call]
                        if ref.call < 0 and len(granted) >= -ref.call:
                            found = [granted[ref.call]]
                        passed[0] = found[0][1] if found else None
                        args[0] = LeaseArg(t, found[0][0]) if found else None
                    elif isinstance(ref, ForeignLease):
                        passed[0] = other
                    if op.startswith("Lease.") and not isinstance(passed[0], Lease):
                        op = "release_lease" if op == "Lease.release" else "renew_lease"
                take()
                invoked = ns()
                try:
                    value = invoke(cache, op, tuple(passed))
                except Exception as exc:
                    returned = ns()
                    outcome: CallOutcome = Raised(type(exc).__name__)
                else:
                    returned = ns()
                    outcome = observe(value)
                    if isinstance(value, Lease):
                        granted.append((index, value))
                observed = ns()
                call = Call(t, op, tuple(args), invoked, returned, outcome, observed, take(), index)
                log.append(call)
        except BaseException as exc:  # reported by the caller, not lost in the thread
            failures.append(exc)
            barrier.abort()

    workers = [threading.Thread(target=run, args=(t,), name=f"lin-{t}") for t in range(n)]
    old = sys.getswitchinterval()
    sys.setswitchinterval(switch_interval)
    try:
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    finally:
        sys.setswitchinterval(old)
    if failures:
        raise RuntimeError(f"a history thread died: {failures[0]!r}") from failures[0]
    try:
        cache.check()
        sweep_error = None
    except Exception as exc:
        sweep_error = f"{type(exc).__name__}: {exc}"
    calls = tuple(call for log in logs for call in log)
    return History(calls, n, sweep_error, tuple(idents))
