"""Lock structure: every public method is one critical section around its transition.

Deterministic, no threads. The cache's lock is swapped for a recording one
(a ``threading.Lock`` that notes who holds it and every acquire and
release), its transitions table for one whose functions note whether the
lock is held when they are called, and its state for a stand-in that notes
the same on every attribute read or write (which covers ``check``, whose
sweep reads the state, and ``__len__``). A script then drives every public
method through its success and misuse paths; for each call the record must
read: one acquire, the method's own transition (or state access) with the
lock held, one release. Run in every build (tests/test_builds.py) and for
every policy.

Non-vacuity: a copy of the cache with the lock removed from any one method
(``lin_mutants.without_lock``, made from cache.py's own source) is caught,
and so is each linearizability mutant (split critical sections, unlocked
read-then-write).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import TracebackType

import pytest
from lin_mutants import PUBLIC, UNLOCKED, unlocked_source

from embedding_cache import (
    EVICTION_POLICIES,
    AlreadyReadyError,
    CacheError,
    CapacityError,
    DiscardHeldError,
    DuplicateAllocError,
    EmbeddingCache,
    NotPinnedError,
    NotReadyError,
    UnknownKeyError,
)
from embedding_cache.state import CacheState
from embedding_cache.verification import Lease, Transitions
from embedding_cache_checker.verify.lin import MUTANTS

POLICIES = list(EVICTION_POLICIES)
#: The methods that reach the state through the transitions table.
TABLE_METHODS = frozenset(Transitions.__slots__)


class RecordingLock:
    """A ``threading.Lock`` that records its owner and every acquire, release and note."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.owner: int | None = None
        self.events: list[str] = []

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        got = self._lock.acquire(blocking, timeout)
        if got:
            self.owner = threading.get_ident()
            self.events.append("acquire")
        return got

    def release(self) -> None:
        if self.owner != threading.get_ident():
            self.events.append("release by a thread that does not hold it")
        self.owner = None
        self.events.append("release")
        self._lock.release()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()

    def locked(self) -> bool:
        return self._lock.locked()

    def note(self, what: str) -> None:
        """Record ``what``, marked UNLOCKED unless the calling thread holds the lock."""
        held = self.owner == threading.get_ident()
        self.events.append(what if held else f"{what} UNLOCKED")


class GuardedState:
    """Stands in for the cache's CacheState; notes every attribute read and write on the lock."""

    __slots__ = ("_guard_lock", "_guard_real")
    _guard_lock: RecordingLock
    _guard_real: CacheState

    def __init__(self, real: CacheState, lock: RecordingLock) -> None:
        object.__setattr__(self, "_guard_real", real)
        object.__setattr__(self, "_guard_lock", lock)

    def __getattr__(self, name: str) -> object:
        self._guard_lock.note(f"state.{name}")
        return getattr(self._guard_real, name)

    def __setattr__(self, name: str, value: object) -> None:
        self._guard_lock.note(f"state.{name}=")
        setattr(self._guard_real, name, value)


def recording_table(table: Transitions, lock: RecordingLock) -> Transitions:
    """``table`` with every function noting, on the lock, that it was called."""

    def wrap(name: str, func: Callable[..., object]) -> Callable[..., object]:
        def recorded(*args: object) -> object:
            lock.note(f"call {name}")
            return func(*args)

        return recorded

    return Transitions({name: wrap(name, func) for name, func in table.as_mapping().items()})


def instrument(cache: EmbeddingCache) -> RecordingLock:
    """Swap in the recording lock, table and state. O(1)."""
    lock = RecordingLock()
    cache._lock = lock  # type: ignore[assignment]
    cache._ops = recording_table(cache._ops, lock)
    cache._state = GuardedState(cache._state, lock)  # type: ignore[assignment]
    return lock


#: (method, call, the error it must raise or None): every public method through
#: its success and misuse paths, on a 4-block cache.
Step = tuple[str, Callable[[EmbeddingCache], object], type[CacheError] | None]
#: The leases the script takes, for its later calls on them.
HELD: list[Lease | None] = []
SCRIPT: list[Step] = [
    ("get", lambda c: c.get("a"), None),  # absent
    ("has_held_entries", lambda c: c.has_held_entries(), None),
    ("alloc", lambda c: c.alloc("a", 2), None),
    ("alloc", lambda c: c.alloc("a", 1), DuplicateAllocError),
    ("alloc", lambda c: c.alloc("x", 5), CapacityError),
    ("pin", lambda c: c.pin("a"), NotReadyError),
    ("pin_if_ready", lambda c: c.pin_if_ready("a"), None),  # not ready: returned unpinned
    ("has_held_entries", lambda c: c.has_held_entries(), None),
    ("mark_ready", lambda c: c.mark_ready("a"), None),
    ("mark_ready", lambda c: c.mark_ready("a"), AlreadyReadyError),
    ("discard", lambda c: c.discard("a"), DiscardHeldError),
    ("lease", lambda c: HELD.append(c.lease("a", 5.0)), None),
    ("renew_lease", lambda c: c.renew_lease(HELD[-1], 5.0), None),  # type: ignore[arg-type]
    ("expire_leases", lambda c: c.expire_leases(), None),  # a lease is live: none due
    ("release_lease", lambda c: c.release_lease(HELD[-1]), None),  # type: ignore[arg-type]
    ("pin", lambda c: c.pin("a"), None),
    ("pin_if_ready", lambda c: c.pin_if_ready("a"), None),  # pinned twice
    ("unpin", lambda c: c.unpin("a"), None),
    ("unpin", lambda c: c.unpin("a"), None),  # evictable again
    ("unpin", lambda c: c.unpin("a"), NotPinnedError),
    ("alloc", lambda c: c.alloc("b", 3), None),  # evicts a
    ("alloc", lambda c: c.alloc("c", 2), None),  # fails fast: b is held, 1 block free
    ("get", lambda c: c.get("b"), None),
    ("discard", lambda c: c.discard("b"), None),
    ("discard", lambda c: c.discard("b"), UnknownKeyError),
    ("pin_if_ready", lambda c: c.pin_if_ready("b"), None),  # absent
    ("unpin", lambda c: c.unpin("b"), UnknownKeyError),
    ("alloc", lambda c: c.alloc("s", 0, (2, 3)), None),  # the shape, set in the same section
    ("check", lambda c: c.check(), None),
    ("__len__", lambda c: len(c), None),
    ("__repr__", lambda c: repr(c), None),
]


def audit(method: str, events: list[str]) -> list[str]:
    """What is wrong with one public call's record (empty if nothing). O(events)."""
    problems = [f"{method}: {e}" for e in events if e.endswith("UNLOCKED") or "does not" in e]
    acquires = events.count("acquire")
    if acquires != 1:
        problems.append(f"{method}: took the lock {acquires} times, not once")
    elif events[0] != "acquire" or events[-1] != "release":
        problems.append(f"{method}: did work outside its critical section: {events}")
    if method in TABLE_METHODS:
        if f"call {method}" not in events:
            problems.append(f"{method}: its transition was not called with the lock held")
    elif not any(e.startswith("state.") and not e.endswith("UNLOCKED") for e in events):
        problems.append(f"{method}: read no state with the lock held")
    return problems


def lock_discipline(cls: type[EmbeddingCache], policy: str) -> list[str]:
    """Run SCRIPT on an instrumented ``cls`` cache; every problem found, in order."""
    cache = cls(4, eviction=policy)
    lock = instrument(cache)
    problems: list[str] = []
    for method, call, expected in SCRIPT:
        lock.events.clear()
        raised: type[BaseException] | None = None
        try:
            call(cache)
        except CacheError as exc:
            raised = type(exc)
        assert raised is expected, f"{method}: raised {raised}, expected {expected}"
        problems += audit(method, lock.events)
        if lock.locked():
            problems.append(f"{method}: returned with the lock held")
    return problems


def test_the_script_covers_every_public_method() -> None:
    assert {method for method, _, _ in SCRIPT} == {*PUBLIC, "__repr__"}
    assert set(PUBLIC) > TABLE_METHODS  # every table function is some public method's


@pytest.mark.parametrize("policy", POLICIES)
def test_every_public_method_is_one_critical_section(policy: str) -> None:
    assert lock_discipline(EmbeddingCache, policy) == []


def test_the_recording_lock_is_a_lock() -> None:
    lock = RecordingLock()
    with lock:
        assert lock.locked() and not lock.acquire(blocking=False)
        lock.note("inside")
    lock.note("outside")
    assert lock.events == ["acquire", "inside", "release", "outside UNLOCKED"]


# --------------------------------------------------------------------------
# Non-vacuity.


@pytest.mark.parametrize("method", PUBLIC)
def test_a_method_without_its_lock_is_caught(method: str) -> None:
    assert "_lock" not in unlocked_source(method)
    problems = lock_discipline(UNLOCKED[method], "fifo")
    assert problems, f"EmbeddingCache.{method} without its lock was not caught"
    assert all(p.startswith(f"{method}:") for p in problems), problems


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_a_non_linearizable_mutant_is_caught(mutant: str) -> None:
    problems = lock_discipline(MUTANTS[mutant], "fifo")
    assert problems, f"{mutant} was not caught"
    method = mutant.split("_", 1)[1]
    assert all(p.startswith(f"{method}:") for p in problems), problems
