"""Concurrent histories: many threads call one cache; each call's interval and outcome is recorded.

A *history* is what a linearizability checker reads: for every call, the
thread that made it, the operation and its arguments, the invocation and
response times (``time.perf_counter_ns`` just before the call and just after
it returned or raised) and the outcome, normalised so it can be compared with
the sequential specification's (``Outcome``). Nothing here takes the cache's
lock or looks inside it: the calls are the public methods, as a client makes
them.

``record_history`` runs a *plan* (each thread's list of calls, fixed in
advance, misuse included) with the interpreter's switch interval at 1 us,
all threads released together by a barrier: the interpreter then switches
threads every few bytecodes, inside calls, so about a third of the calls
overlap another thread's call in the default build and three fifths in the
fully checked one (``overlaps`` counts them; at the default 5 ms interval
none would). The barrier is outside the timed intervals.
"""

from __future__ import annotations

import random
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from embedding_cache.cache import EmbeddingCache
from embedding_cache.entry import CacheEntry


class EntryView(NamedTuple):
    """A returned ``CacheEntry`` as its caller saw it just after the call."""

    block_ids: tuple[int, ...]
    ready: bool


class Raised(NamedTuple):
    """A call that raised: the exception's class name."""

    error: str


#: A call's normalised result: None, a bool (has_held_entries), an int (len),
#: an entry, or the error it raised.
Outcome = EntryView | Raised | bool | int | None

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
)

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
}


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
    outcome: Outcome
    #: perf_counter_ns once the caller had read the outcome (an entry's ready
    #: flag is read after the call returned); 0 means ``returned``.
    observed: int = 0

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
        return f"t{self.thread}: {self.op}({args}) -> {self.outcome!r} {span}"


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


def observe(value: object) -> Outcome:
    """A call's result as a comparable value. O(blocks of the entry)."""
    if isinstance(value, CacheEntry):
        return EntryView(tuple(value.block_ids), value.ready)
    if value is None or isinstance(value, (bool, int)):
        return value
    return Raised(f"returned a {type(value).__name__}")


def invoke(cache: EmbeddingCache, op: str, args: tuple[object, ...]) -> object:
    """Call public method ``op`` of ``cache`` (``len`` is ``len(cache)``)."""
    if op == "len":
        return len(cache)
    return getattr(cache, op)(*args)


def random_plan(
    rng: random.Random, threads: int, ops_per_thread: int, keys: int, num_blocks: int
) -> list[list[Invocation]]:
    """Each thread's calls, drawn by ``WEIGHTS`` on ``keys`` shared keys. O(threads * ops).

    No call is kept legal: unpin of an unpinned entry, mark_ready twice,
    discard of a ready entry, duplicate alloc, pin of an absent key, alloc of
    more blocks than the pool all happen, and each must raise its typed error
    as the sequential specification says.
    """
    names = [f"k{i}" for i in range(keys)]
    ops = list(WEIGHTS)
    weights = [WEIGHTS[op] for op in ops]
    sizes = [0, 1, 1, 2, 2, 3, num_blocks + 1]
    plan: list[list[Invocation]] = []
    for _ in range(threads):
        calls: list[Invocation] = []
        for op in rng.choices(ops, weights, k=ops_per_thread):
            if op in ("has_held_entries", "len", "check"):
                calls.append(Invocation(op, ()))
            elif op == "alloc":
                calls.append(Invocation(op, (rng.choice(names), rng.choice(sizes))))
            else:
                calls.append(Invocation(op, (rng.choice(names),)))
        plan.append(calls)
    return plan


def record_history(
    cache: EmbeddingCache,
    plan: Plan,
    *,
    switch_interval: float = 1e-6,
) -> History:
    """Run ``plan`` on ``cache``, one thread per entry, and record every call.

    All threads start together at a barrier. The interpreter's switch interval is
    ``switch_interval`` for the run and restored after it. Every call's
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
    clock = time.perf_counter_ns

    def run(t: int) -> None:
        log = logs[t]
        idents[t] = threading.get_ident()
        try:
            barrier.wait()
            for op, args in plan[t]:
                invoked = clock()
                try:
                    value = invoke(cache, op, args)
                except Exception as exc:
                    returned = clock()
                    outcome: Outcome = Raised(type(exc).__name__)
                else:
                    returned = clock()
                    outcome = observe(value)
                observed = clock()
                log.append(Call(t, op, tuple(args), invoked, returned, outcome, observed))
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
