"""Stateful test: the cache against a deliberately simple model, step by step.

A Hypothesis ``RuleBasedStateMachine`` drives an ``EmbeddingCache`` and
``Model`` -- a dict key -> ModelEntry(pins, n_blocks), a Python list as the
FIFO queue and an int free count, written from spec/NAMES.md and sharing no
code with the cache -- through every operation, misuse included, and after
each step compares return values, raised errors and the abstract state; the
full invariant sweep (``cache.check()``) runs after every step too, in every
build. Rules are named after the methods; each docstring names the TLA+
action it exercises.

The spec leaves open which free blocks an alloc takes, so the model does not
choose them: it records the ids the cache returned and checks their count,
range, ascending order, uniqueness, disjointness from every other live entry
and that they never change while the entry lives (HeldBlocksStableProp).

Rules that need a key in a given state take ``pick`` and use the pick-th such
key (modulo their number): no rejection inside rules, and a shrunk failure
prints as plain Python that replays it.
"""

from __future__ import annotations

from dataclasses import dataclass

from cache_observe import free_count, observe, queue_of
from hypothesis import event
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from embedding_cache import (
    AlreadyReadyError,
    CacheEntry,
    CapacityError,
    DiscardHeldError,
    DuplicateAllocError,
    EmbeddingCache,
    LifecycleError,
    NotPinnedError,
    NotReadyError,
    UnknownKeyError,
)

#: A small alphabet, so keys collide and are reused after eviction and discard.
KEYS = ("a", "b", "c", "d", "e")
#: Pool sizes; n_blocks is drawn up to MAX_REQUEST, so some requests exceed the pool.
MAX_POOL = 12
MAX_REQUEST = 14
#: Keys and counts that are not well-formed arguments.
BAD_KEYS = st.sampled_from([1, None, b"a", ("a",)])
BAD_COUNTS = st.sampled_from([True, False, 1.0, "1", None, -1, -7])
LIFECYCLE_OPS = ("mark_ready", "pin", "unpin", "discard")


# ---------------------------------------------------------------- the model


@dataclass
class ModelEntry:
    """One live entry: pins -1 = not-ready, 0 = ready (queued), k > 0 = pinned k times."""

    pins: int
    n_blocks: int
    blocks: tuple[int, ...] = ()  # recorded from the cache, never chosen by the model

    def state(self) -> str:
        if self.pins < 0:
            return "not-ready"
        return "ready" if self.pins == 0 else f"pinned({self.pins})"


class ExpectedError(Exception):
    """The model's verdict that a call must raise ``error``, naming ``state``."""

    def __init__(self, error: type[Exception], state: str = "") -> None:
        super().__init__(error.__name__, state)
        self.error = error
        self.state = state


class Model:
    """The spec, as plainly as possible: no counters kept, everything recomputed."""

    def __init__(self, num_blocks: int) -> None:
        self.num_blocks = num_blocks
        self.free = num_blocks
        self.entries: dict[str, ModelEntry] = {}
        self.queue: list[str] = []  # ready+unpinned keys, oldest first

    def evictable(self) -> int:
        return sum(self.entries[k].n_blocks for k in self.queue)

    def keys_where(self, state: str) -> list[str]:
        return sorted(k for k, e in self.entries.items() if e.state().startswith(state))

    def held(self) -> bool:
        return any(e.pins != 0 for e in self.entries.values())

    def _live(self, key: object) -> ModelEntry:
        if not isinstance(key, str):
            raise ExpectedError(TypeError)
        if key not in self.entries:
            raise ExpectedError(UnknownKeyError)
        return self.entries[key]

    def alloc(self, key: object, n: object) -> str | None:
        """Alloc / AllocFail, with Evict of the queue's head as needed."""
        if not isinstance(key, str) or isinstance(n, bool) or not isinstance(n, int):
            raise ExpectedError(TypeError)
        if n < 0:
            raise ExpectedError(ValueError)
        if key in self.entries:
            raise ExpectedError(DuplicateAllocError, self.entries[key].state())
        if n > self.num_blocks:
            raise ExpectedError(CapacityError, "absent")
        if self.free + self.evictable() < n:
            return None
        while self.free < n:
            victim = self.queue.pop(0)
            self.free += self.entries.pop(victim).n_blocks
        self.free -= n
        self.entries[key] = ModelEntry(pins=-1, n_blocks=n)
        return "entry"

    def mark_ready(self, key: object) -> None:
        entry = self._live(key)
        if entry.pins != -1:
            raise ExpectedError(AlreadyReadyError, entry.state())
        entry.pins = 0
        self.queue.append(key)  # type: ignore[arg-type]  # _live checked it is a str

    def pin(self, key: object) -> None:
        entry = self._live(key)
        if entry.pins < 0:
            raise ExpectedError(NotReadyError, entry.state())
        if entry.pins == 0:
            self.queue.remove(key)  # type: ignore[arg-type]
        entry.pins += 1

    def pin_if_ready(self, key: object) -> str | None:
        if not isinstance(key, str):
            raise ExpectedError(TypeError)
        entry = self.entries.get(key)
        if entry is None:
            return None
        if entry.pins >= 0:
            self.pin(key)
        return "entry"

    def unpin(self, key: object) -> None:
        entry = self._live(key)
        if entry.pins <= 0:
            raise ExpectedError(NotPinnedError, entry.state())
        entry.pins -= 1
        if entry.pins == 0:
            self.queue.append(key)  # type: ignore[arg-type]

    def discard(self, key: object) -> None:
        entry = self._live(key)
        if entry.pins != -1:
            raise ExpectedError(DiscardHeldError, entry.state())
        del self.entries[key]  # type: ignore[arg-type]
        self.free += entry.n_blocks

    def get(self, key: object) -> str | None:
        if not isinstance(key, str):
            raise ExpectedError(TypeError)
        return "entry" if key in self.entries else None


# ---------------------------------------------------------------- the machine


class CacheMachine(RuleBasedStateMachine):
    """Drives ``cache_class`` and ``Model`` in lockstep (planted-bug tests subclass it)."""

    cache_class: type[EmbeddingCache] = EmbeddingCache

    def __init__(self) -> None:
        super().__init__()
        self.cache = self.cache_class(0)
        self.model = Model(0)

    @initialize(num_blocks=st.integers(0, 6) | st.integers(0, MAX_POOL))
    def init(self, num_blocks: int) -> None:
        """Init: an empty pool of num_blocks blocks."""
        self.cache = self.cache_class(num_blocks)
        self.model = Model(num_blocks)

    # -- the lockstep call

    def _both(self, op: str, *args: object) -> CacheEntry | str | None:
        """Call ``op`` on the model and the cache; compare outcomes; return the cache's."""
        before = observe(self.cache)
        try:
            expected = getattr(self.model, op)(*args)
        except ExpectedError as verdict:
            event(
                f"{op} raises {verdict.error.__name__}"
            )  # coverage, in --hypothesis-show-statistics
            self._expect_error(op, args, verdict)
            after = observe(self.cache)
            assert after == before, f"MisuseUnchangedProp: {op}{args!r} changed the cache"
            return None
        evicted = len(self.model.entries) < len(before.entries) + (expected is not None)
        event(f"{op} -> {expected}" + (" after eviction" if op == "alloc" and evicted else ""))
        actual = getattr(self.cache, op)(*args)
        if expected is None:
            assert actual is None, f"model disagrees: {op}{args!r} returned {actual!r}, not None"
        elif expected == "entry":
            assert isinstance(actual, CacheEntry), f"model disagrees: {op}{args!r} -> {actual!r}"
        return actual  # type: ignore[no-any-return]

    def _expect_error(self, op: str, args: tuple[object, ...], verdict: ExpectedError) -> None:
        try:
            result = getattr(self.cache, op)(*args)
        except Exception as exc:
            # Exact types: a contract violation is an AssertionError too, and must not pass.
            assert type(exc) is verdict.error, f"{op}{args!r} raised {exc!r}, not {verdict.error}"
            if isinstance(exc, LifecycleError):
                assert exc.phrase in str(exc) and repr(args[0]) in str(exc)
                assert exc.key == args[0] and exc.state == verdict.state, repr(exc)
            if isinstance(exc, UnknownKeyError):
                assert exc.key == args[0] and repr(args[0]) in str(exc)
            return
        raise AssertionError(f"{op}{args!r} returned {result!r}; expected {verdict.error}")

    def _pick(self, state: str, pick: int) -> str:
        keys = self.model.keys_where(state)
        return keys[pick % len(keys)]

    # -- rules

    @rule(key=st.sampled_from(KEYS), n_blocks=st.integers(0, 4) | st.integers(0, MAX_REQUEST))
    def alloc(self, key: str, n_blocks: int) -> None:
        """Alloc / AllocFail (and Evict inside Alloc); also duplicate-alloc and capacity misuse."""
        entry = self._both("alloc", key, n_blocks)
        if isinstance(entry, CacheEntry):
            self.model.entries[key].blocks = entry.block_ids
            assert entry.pin_count == -1 and not entry.ready and not entry.evictable

    @precondition(lambda self: self.model.keys_where("not-ready"))
    @rule(pick=st.integers(0, len(KEYS) - 1))
    def mark_ready(self, pick: int) -> None:
        """MarkReady of a not-ready entry: it joins the queue's tail."""
        self._both("mark_ready", self._pick("not-ready", pick))

    @precondition(lambda self: self.model.keys_where("ready") or self.model.keys_where("pinned"))
    @rule(pick=st.integers(0, len(KEYS) - 1))
    def pin(self, pick: int) -> None:
        """Pin of a ready or pinned entry (pins nest)."""
        keys = self.model.keys_where("ready") + self.model.keys_where("pinned")
        self._both("pin", keys[pick % len(keys)])

    @rule(key=st.sampled_from(KEYS))
    def pin_if_ready(self, key: str) -> None:
        """PinIfReady: pins a ready entry; on a not-ready or absent key, a query."""
        expected_pins = self.model.entries[key].pins if key in self.model.entries else None
        entry = self._both("pin_if_ready", key)
        if isinstance(entry, CacheEntry) and expected_pins is not None:
            want = expected_pins if expected_pins < 0 else expected_pins + 1
            assert entry.pin_count == want, f"model disagrees: pin_if_ready pins {entry!r}"

    @precondition(lambda self: self.model.keys_where("pinned"))
    @rule(pick=st.integers(0, len(KEYS) - 1))
    def unpin(self, pick: int) -> None:
        """Unpin of a pinned entry; the last one re-queues it at the tail."""
        self._both("unpin", self._pick("pinned", pick))

    @precondition(lambda self: self.model.keys_where("not-ready"))
    @rule(pick=st.integers(0, len(KEYS) - 1))
    def discard(self, pick: int) -> None:
        """Discard of a not-ready entry: its blocks go back to the pool."""
        self._both("discard", self._pick("not-ready", pick))

    @rule(op=st.sampled_from(LIFECYCLE_OPS), key=st.sampled_from(KEYS))
    def any_key(self, op: str, key: str) -> None:
        """MarkReady / Pin / Unpin / Discard on any key: legal or misuse (MisuseUnchangedProp)."""
        self._both(op, key)

    @rule(
        op=st.sampled_from(("alloc", *LIFECYCLE_OPS, "get", "pin_if_ready")),
        key=st.sampled_from(KEYS) | BAD_KEYS,
        n_blocks=BAD_COUNTS,
    )
    def bad_arguments(self, op: str, key: object, n_blocks: object) -> None:
        """Any operation with a non-str key, or Alloc with a malformed count.

        TypeError/ValueError, nothing changes (MisuseUnchangedProp).
        """
        if op != "alloc" and isinstance(key, str):
            key = key.encode()  # keep the call malformed
        self._both(op, *((key, n_blocks) if op == "alloc" else (key,)))

    @rule(key=st.sampled_from(KEYS))
    def get(self, key: str) -> None:
        """get is a query: None iff absent."""
        self._both("get", key)

    # -- after every step

    @invariant()
    def invariant_sweep(self) -> None:
        """Every named invariant (TypeOK, BlockConservationInv, ...) holds, in every build."""
        self.cache.check()

    @invariant()
    def model_agrees(self) -> None:
        """The abstract state: entries, pins, block counts, queue order, free count, held."""
        model, cache = self.model, self.cache
        assert len(cache) == len(model.entries), "model disagrees: number of entries"
        owned: set[int] = set()
        for key in KEYS:
            entry, want = cache.get(key), model.entries.get(key)
            if want is None:
                assert entry is None, f"model disagrees: {key!r} should be absent, is {entry!r}"
                continue
            assert entry is not None, f"model disagrees: {key!r} should be {want.state()}"
            assert entry.pin_count == want.pins, f"model disagrees: pin count of {key!r}"
            assert entry.ready == (want.pins >= 0) and entry.evictable == (want.pins == 0)
            ids = entry.block_ids
            assert type(ids) is tuple and len(ids) == want.n_blocks, f"block count of {key!r}"
            assert ids == want.blocks, f"HeldBlocksStableProp: {key!r} blocks changed"
            assert list(ids) == sorted(set(ids)), f"{key!r} ids not unique and ascending"
            assert all(0 <= b < model.num_blocks for b in ids), f"{key!r} ids out of range"
            assert owned.isdisjoint(ids), f"{key!r} shares blocks with another entry"
            owned.update(ids)
        assert queue_of(cache) == model.queue, "model disagrees: queue order"
        assert free_count(cache) == model.free, "model disagrees: free count"
        assert cache._state.evictable_blocks == model.evictable(), "model disagrees: evictable"
        assert cache.has_held_entries() == model.held(), "model disagrees: has_held_entries"


TestCacheMachine = CacheMachine.TestCase
