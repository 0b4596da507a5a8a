"""Stateful test: the cache against deliberately simple models, step by step, per policy.

A Hypothesis ``RuleBasedStateMachine`` drives an ``EmbeddingCache`` and a
reference ``Model`` (tests/reference_models: a dict key -> ModelEntry(pins,
n_blocks) and an int free count, plus one plain model of the eviction
policy's ordering rule, all written from the spec and sharing no code with
the cache) through every operation, misuse included. After each step it
compares return values, raised errors and the abstract state
(``abstraction.abstract_state``: entries, pins, block counts, free count,
held, and the policy's variables from ``PolicyChecks.abstract`` against
the policy model's own); the full invariant sweep (``cache.check()``) runs
after every step too, in every build. Rules are named after the methods;
each docstring names the TLA+ action it exercises.

One machine per policy of ``EVICTION_POLICIES`` (``machine_for``; the
TestCases are generated in a loop below), on pools of at most 12 blocks, and
one more per policy with the doorkeeper (spec/SPEC.md section 13): its model
keeps the door (capacity 1, 2, 3 or the default, drawn per run, so the door
overflows) and declines exactly when the section says; the door is compared
after every step; and one more per policy with contiguity (section 14, k of 1
to 3 on the extents pool): the model runs the extra-eviction phase on the
block ids it recorded, whose free runs it reads.
gdsf's cache is built with small ``scale``/``max_freq`` drawn per run
(``functools.partial(GdsfPolicy, ...)``) so that priorities tie and use
counts hit their cap; some runs use the name and the defaults.

The spec leaves open which free blocks an alloc takes, so the model does not
choose them: it records the ids the cache returned and checks their count,
range, ascending order, uniqueness, disjointness from every other live entry
and that they never change while the entry lives (HeldBlocksStableProp).

Rules that need a key in a given state take ``pick`` and use the pick-th such
key (modulo their number): no rejection inside rules, and a shrunk failure
prints as plain Python that replays it.

Non-vacuity: every planted bug of the catalogue (``embedding_cache_checker.verify.planted``)
that the stateful layer must catch makes the machine fail, under every policy it
applies to: the shared core's transition bugs under each policy, and each
policy's own order bugs (e.g. fifo inserting at the head, gdsf forgetting to
raise its clock or ignoring uses, s3fifo ignoring its ghost or never promoting),
and the admission and contiguity bugs in their machines.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import pytest
from cache_observe import observe
from hypothesis import HealthCheck, Phase, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from reference_models import REFERENCE_MODELS, ExpectedError, Model

from embedding_cache import (
    ADMISSION_FILTERS,
    ALLOCATORS,
    EVICTION_POLICIES,
    CacheEntry,
    Doorkeeper,
    EmbeddingCache,
    EvictionPolicy,
    InvariantViolationError,
    Lease,
    LifecycleError,
    UnknownKeyError,
)
from embedding_cache.admission import DOOR_PER_BLOCK, MIN_DOOR, AdmissionSpec
from embedding_cache.policies import PolicySpec
from embedding_cache_checker.abstraction import (
    AbstractEntry,
    AbstractState,
    abstract_state,
    policy_view,
)
from embedding_cache_checker.verify import planted
from embedding_cache_checker.verify.planted import PlantedBug

#: A small alphabet, so keys collide and are reused after eviction and discard, yet
#: large enough that the live keys outgrow a pool and some key is always free to alloc.
KEYS = ("a", "b", "c", "d", "e", "f", "g", "h")
#: Pool sizes; n_blocks is drawn up to MAX_REQUEST, so some requests exceed the pool.
MAX_POOL = 12
MAX_REQUEST = 14
#: Keys and counts that are not well-formed arguments.
BAD_KEYS = st.sampled_from([1, None, b"a", ("a",)])
BAD_COUNTS = st.sampled_from([True, False, 1.0, "1", None, -1, -7])
LIFECYCLE_OPS = ("mark_ready", "pin", "unpin", "discard")
#: Lease lengths and clock steps, in the fake clock's seconds: ties and exact deadlines occur.
SECONDS = st.sampled_from((0, 0.5, 1, 1.5, 2, 3, 5))
BAD_SECONDS = st.sampled_from((-1, -0.5, float("nan"), float("inf"), "1", None, True))
#: The calls a rule may make right after the clock moved (each expires the due leases first).
AFTER_TICK_OPS = ("get", "pin_if_ready", "has_held_entries", "expire_leases", "lease", "alloc")


class FakeClock:
    """The machine's clock: moved only by its rules."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


Params = dict[str, int]

#: The values a policy's constructor parameter is drawn from: small, so that priorities
#: tie and counters reach their caps within a run.
PARAM_VALUES = (1, 2, 3, 4, 8)


def drawn_params(policy: type[EvictionPolicy]) -> st.SearchStrategy[Params]:
    """The parameters a run of ``policy`` draws (passed to the policy and to its model
    alike): each keyword-only parameter of its constructor from :data:`PARAM_VALUES`,
    or {} (the registered name with its defaults). Found from the class, so every
    policy's parameters are drawn and no policy is named here. O(parameters)."""
    names = [
        p.name
        for p in inspect.signature(policy.__init__).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    ]
    if not names:
        return st.just({})
    drawn = st.fixed_dictionaries({n: st.sampled_from(PARAM_VALUES) for n in names})
    return st.one_of(drawn, st.just({}))


def eviction_for(policy: type[EvictionPolicy], params: Params) -> PolicySpec:
    """The ``eviction=`` argument: the registered name when it is the real policy with its
    defaults, else a factory (the class, or a partial binding the parameters)."""
    if not params and EVICTION_POLICIES.get(policy.name) is policy:
        return policy.name
    return functools.partial(policy, **params) if params else policy


# ---------------------------------------------------------------- the machine


#: Contiguity's k under the seed's rule: 0, no extra victims.
SEED_RULE: st.SearchStrategy[int] = st.just(0)


class CacheMachine(RuleBasedStateMachine):
    """Drives ``cache_class`` with ``policy_class`` and the reference models in lockstep.

    ``machine_for`` makes one subclass per policy (and per planted bug); the
    planted-cache tests subclass it with another ``cache_class``. As it
    stands it is the fifo machine.
    """

    cache_class: type[EmbeddingCache] = EmbeddingCache
    #: The policy under test; its ``name`` picks the reference model.
    policy_class: type[EvictionPolicy] = EVICTION_POLICIES["fifo"]
    #: The policy's parameters, drawn once per run.
    params: st.SearchStrategy[Params] = st.just({})
    #: The doorkeeper class the cache runs with (None: the seed's rule; a planted bug's
    #: broken subclass); the model keeps a door iff set (the one filter it models).
    admission: type[Doorkeeper] | None = None
    #: The contiguity bound k, drawn once per run (k > 0 runs on the extents allocator).
    contiguity: st.SearchStrategy[int] = SEED_RULE

    def __init__(self) -> None:
        super().__init__()  # ``init`` (an initialize step, so always run) replaces these
        self.cache = self.cache_class(0, eviction=eviction_for(self.policy_class, {}))
        self.model = Model(0, REFERENCE_MODELS[self.policy_class.name](0))
        self.clock = FakeClock()
        #: Every lease granted so far, with its model id (held or not).
        self.handles: list[tuple[Lease, int]] = []
        #: A lease another cache granted (a foreign lease for misuse calls).
        self.foreign: Lease | None = None

    @initialize(
        num_blocks=st.integers(1, 6) | st.integers(0, MAX_POOL),
        data=st.data(),
        warmup=st.lists(st.tuples(st.sampled_from(KEYS), st.integers(0, 4), st.integers(0, 3))),
    )
    def init(
        self, num_blocks: int, data: st.DataObject, warmup: list[tuple[str, int, int]]
    ) -> None:
        """Init: an empty pool of num_blocks blocks, under the policy with drawn parameters;
        then a warm-up, so that every run starts from a used, often full pool.

        Each warm-up item (key, n, uses): Alloc (if key is absent and n fits the
        pool), MarkReady, then ``uses`` uses (Pin, Unpin). Initialize steps run
        in every run, whereas swarm testing switches rules off per run: without
        the warm-up, many runs would never fill the pool and never evict. Each
        step is compared with the model as the rules' are.
        """
        params = data.draw(self.params, label="params")
        # Both allocators under every policy: the model predicts counts, not ids.
        k = data.draw(self.contiguity, label="contiguity")
        allocator = (
            "extents" if k else data.draw(st.sampled_from(sorted(ALLOCATORS)), label="allocator")
        )
        name = self.policy_class.name
        door, capacity = self._door(num_blocks, data)
        self.cache = self.cache_class(
            num_blocks,
            eviction=eviction_for(self.policy_class, params),
            allocator=allocator,
            clock=self.clock,
            admission=door,
            contiguity=k,
        )
        other = EmbeddingCache(1, clock=self.clock)
        other.alloc("x", 0)
        other.mark_ready("x")
        self.foreign = other.lease("x", 1)
        assert (self.cache.eviction, self.cache.allocator) == (name, allocator)
        policy_model = REFERENCE_MODELS[name](num_blocks, **params)
        self.model = Model(num_blocks, policy_model, capacity, k)
        for key, n_blocks, uses in warmup:
            if key in self.model.entries or n_blocks > num_blocks:
                continue
            entry = self._both("alloc", key, n_blocks)
            if not isinstance(entry, CacheEntry):
                continue
            self.model.entries[key].blocks = entry.block_ids
            self._both("mark_ready", key)
            for _ in range(uses):
                self._both("pin", key)
                self._both("unpin", key)
            self.invariant_sweep()
            self.model_agrees()

    def _door(
        self, num_blocks: int, data: st.DataObject
    ) -> tuple[Callable[[int], Doorkeeper] | None, int | None]:
        """The cache's ``admission=`` and the model's door capacity: the filter with a
        drawn capacity (small ones, so the door overflows, or the default), or none."""
        if self.admission is None:
            return None, None
        drawn = data.draw(st.sampled_from((1, 2, 3, None)), label="door capacity")
        if drawn is None:
            return self.admission, max(MIN_DOOR, int(num_blocks * DOOR_PER_BLOCK))
        return functools.partial(self.admission, capacity=drawn), drawn

    # -- the lockstep call

    def _both(self, op: str, *args: object) -> Any:
        """Call ``op`` on the model and the cache; compare outcomes; return the cache's."""
        return self._lockstep(op, args, args)

    def _lockstep(self, op: str, model_args: tuple[object, ...], args: tuple[object, ...]) -> Any:
        """``op`` on the model (``model_args``) and on the cache (``args``: the same, except
        that lease calls pass the cache's Lease where the model takes the lease's id).

        Every public call of the cache first expires the due leases, so the model does
        too. A legal call then runs straight on the cache, which expires inside the
        call (the lazy path); before a call that must raise, the cache is settled by
        ``expire_leases`` (compared with the model), so that "it changed nothing"
        compares like with like (MisuseUnchangedProp).
        """
        entries_before = len(self.model.entries)
        expired = self.model.expire_due()
        try:
            expected = getattr(self.model, op)(*model_args)
            if op == "expire_leases":
                expected = expired  # what the call released is what its start expired
        except ExpectedError as verdict:
            # coverage, in --hypothesis-show-statistics
            event(f"{op} raises {verdict.error.__name__}")
            if expired:
                settled = self.cache.expire_leases()
                assert settled == expired, f"model disagrees: expired {settled}, not {expired}"
            before = observe(self.cache)
            self._expect_error(op, args, verdict)
            after = observe(self.cache)
            assert after == before, f"MisuseUnchangedProp: {op}{args!r} changed the cache"
            return None
        evicted = len(self.model.entries) < entries_before + (expected is not None)
        event(f"{op} -> {expected}" + (" after eviction" if op == "alloc" and evicted else ""))
        if expired:
            event(f"{op} expired {len(expired)} lease(s) first")
        for moment in self.model.policy.events:
            event(moment)
        self.model.policy.events.clear()
        try:
            actual = getattr(self.cache, op)(*args)
        except Exception as exc:  # a legal call must not raise (a contract violation included)
            raise AssertionError(
                f"model disagrees: {op}{args!r} raised {exc!r}; the model expected {expected!r}"
            ) from exc
        if expected is None:
            assert actual is None, f"model disagrees: {op}{args!r} returned {actual!r}, not None"
        elif expected == "entry":
            assert isinstance(actual, CacheEntry), f"model disagrees: {op}{args!r} -> {actual!r}"
        elif op == "lease":
            lease_id, held = expected
            assert isinstance(actual, Lease) and (actual.held, actual.ready) == (held, held), (
                f"model disagrees: lease{args!r} -> {actual!r}, expected held={held}"
            )
            self.handles.append((actual, lease_id))
        else:  # release_lease, renew_lease: a bool; expire_leases: the keys released, in order
            assert actual == expected, (
                f"model disagrees: {op}{args!r} -> {actual!r}, not {expected!r}"
            )
        return actual

    def _expect_error(self, op: str, args: tuple[object, ...], verdict: ExpectedError) -> None:
        try:
            result = getattr(self.cache, op)(*args)
        except Exception as exc:
            # Exact types: a contract violation is an AssertionError too, and must not pass.
            assert type(exc) is verdict.error, (
                f"model disagrees: {op}{args!r} raised {exc!r}, not {verdict.error}"
            )
            if isinstance(exc, LifecycleError):
                assert exc.phrase in str(exc) and repr(args[0]) in str(exc), repr(exc)
                assert exc.key == args[0] and exc.state == verdict.state, (
                    f"model disagrees: {exc!r} should name state {verdict.state!r}"
                )
            if isinstance(exc, UnknownKeyError):
                assert exc.key == args[0] and repr(args[0]) in str(exc)
            return
        raise AssertionError(
            f"model disagrees: {op}{args!r} returned {result!r}; expected {verdict.error}"
        )

    def _absent_keys(self) -> list[str]:
        return [k for k in KEYS if k not in self.model.entries]

    def _pick(self, state: str, pick: int) -> str:
        keys = self.model.keys_where(state)
        return keys[pick % len(keys)]

    # -- rules

    @rule(
        key=st.sampled_from(KEYS),
        n_blocks=st.integers(0, 4) | st.integers(0, MAX_REQUEST),
        evicting=st.booleans(),
        ready=st.booleans(),
    )
    def alloc(self, key: str, n_blocks: int, evicting: bool, ready: bool) -> None:
        """Alloc / AllocFail (and Evict inside Alloc); also duplicate-alloc and capacity misuse.

        ``evicting``: when some key is absent and some block evictable, alloc an
        absent key (the key-th) of free + 1 .. free + evictable blocks, so that
        it must evict (random sizes rarely need to; evictions are what tell the
        policies apart). ``ready``: MarkReady the new entry straight away (the
        usual life of an entry; one rule, so that swarm testing, which turns
        rules off per run, cannot starve evictions of ready entries).
        """
        absent, evictable = self._absent_keys(), self.model.evictable()
        if evicting and absent and evictable:
            key = absent[KEYS.index(key) % len(absent)]
            n_blocks = self.model.free + 1 + n_blocks % evictable
        entry = self._both("alloc", key, n_blocks)
        if isinstance(entry, CacheEntry):
            self.model.entries[key].blocks = entry.block_ids
            assert entry.pin_count == -1 and not entry.ready and not entry.evictable, (
                f"model disagrees: a new entry is not-ready, not {entry!r}"
            )
            if ready:
                self._both("mark_ready", key)

    @precondition(lambda self: self.model.keys_where("ready"))
    @rule(pick=st.integers(0, len(KEYS) - 1), times=st.integers(1, 4))
    def use(self, pick: int, times: int) -> None:
        """Uses of a ready entry: ``times`` nested pins (PinStep: hold, then hit each time),
        then as many unpins (the last one: release)."""
        key = self._pick("ready", pick)
        for i in range(times):
            self._both("pin_if_ready" if i % 2 else "pin", key)
        for _ in range(times):
            self._both("unpin", key)

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
        """Unpin of a pinned entry; the last one puts it back in the evictable set."""
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
        """get is a query (and not a use: the policy state must not change)."""
        self._both("get", key)

    # -- leases (spec/SPEC.md section 12)

    @rule(key=st.sampled_from(KEYS), seconds=SECONDS)
    def lease(self, key: str, seconds: float) -> None:
        """Lease: pin_if_ready with a deadline (None when absent; holds nothing if not ready)."""
        self._both("lease", key, seconds)

    def _pick_handle(self, pick: int) -> tuple[Lease, int]:
        """Mostly a live lease (the model's), sometimes any lease ever handed out."""
        live = [h for h in self.handles if h[1] in self.model.leases]
        pool = live if live and pick % 4 else self.handles
        return pool[(pick // 4) % len(pool)]

    @precondition(lambda self: self.handles)
    @rule(pick=st.integers(0, 63))
    def release_lease(self, pick: int) -> None:
        """Release of any lease handed out: True once while held; never unpins twice."""
        lease, lease_id = self._pick_handle(pick)
        via_handle = pick % 2 == 0  # Lease.release() and cache.release_lease(lease) alike
        if via_handle:
            expired = self.model.expire_due()
            expected = self.model.release_lease(lease_id)
            if expired:
                event("release expired lease(s) first")
            assert lease.release() is expected, f"model disagrees: release of {lease!r}"
        else:
            self._lockstep("release_lease", (lease_id,), (lease,))

    @precondition(lambda self: self.handles)
    @rule(pick=st.integers(0, 63), seconds=SECONDS)
    def renew_lease(self, pick: int, seconds: float) -> None:
        """Renew: the deadline becomes now + seconds while held; False once it is not."""
        lease, lease_id = self._pick_handle(pick)
        self._lockstep("renew_lease", (lease_id, seconds), (lease, seconds))

    @precondition(lambda self: self.model.keys_where("ready") or self.model.keys_where("pinned"))
    @rule(
        pick=st.integers(0, len(KEYS) - 1),
        seconds=SECONDS,
        plain_pin=st.booleans(),
        dt=SECONDS,
        end=st.sampled_from(("release_lease", "renew_lease", "expire_leases")),
    )
    def lease_life(self, pick: int, seconds: float, plain_pin: bool, dt: float, end: str) -> None:
        """A lease's life on a held-or-ready entry: Lease, maybe a plain Pin beside it,
        Tick, then LeaseRelease, Renew (then an expiry pass) or an expiry pass."""
        keys = self.model.keys_where("ready") + self.model.keys_where("pinned")
        key = keys[pick % len(keys)]
        self._both("lease", key, seconds)
        lease, lease_id = self.handles[-1]
        if plain_pin:
            self._both("pin", key)
        self.clock.now += dt
        self.model.now = self.clock.now
        if end == "release_lease":
            self._lockstep(end, (lease_id,), (lease,))
        elif end == "renew_lease":
            self._lockstep(end, (lease_id, seconds), (lease, seconds))
            self._both("expire_leases")
        else:
            self._both("expire_leases")
        if plain_pin:
            self._both("unpin", key)

    @rule(dt=SECONDS, op=st.sampled_from(AFTER_TICK_OPS), key=st.sampled_from(KEYS))
    def later(self, dt: float, op: str, key: str) -> None:
        """Tick, then one call: the clock moves and the next call expires the due leases
        first (Expire, lazily inside that call)."""
        self.clock.now += dt
        self.model.now = self.clock.now
        if op == "expire_leases" or op == "has_held_entries":
            self._both(op)
        elif op == "lease":
            self._both(op, key, dt)
        elif op == "alloc" and key not in self.model.entries:
            entry = self._both("alloc", key, 1 + self.model.free + self.model.evictable() // 2)
            if isinstance(entry, CacheEntry):
                self.model.entries[key].blocks = entry.block_ids
        elif op == "alloc":  # a live key: a duplicate alloc, misuse (after the expiry)
            self._both("alloc", key, 1)
        else:
            self._both(op, key)

    @rule(
        key=st.sampled_from(KEYS) | BAD_KEYS,
        seconds=SECONDS | BAD_SECONDS,
        what=st.sampled_from(("lease", "release_lease", "renew_lease")),
        thing=st.sampled_from(("foreign", "none", "entry")),
    )
    def bad_lease_arguments(self, key: object, seconds: object, what: str, thing: str) -> None:
        """Lease misuse: a bad key or bad seconds; a foreign lease or a non-Lease handed to
        release/renew. A typed error, nothing changes (MisuseUnchangedProp)."""
        if what == "lease":
            try:
                self.model._seconds(seconds)
            except ExpectedError:
                pass
            else:
                key = key.encode() if isinstance(key, str) else key  # keep the call malformed
            self._both("lease", key, seconds)
            return
        handle: object = {"foreign": self.foreign, "none": None, "entry": CacheEntry(())}[thing]
        model_handle = "foreign" if thing == "foreign" else None
        extra: tuple[object, ...] = (seconds,) if what == "renew_lease" else ()
        self._lockstep(what, (model_handle, *extra), (handle, *extra))

    # -- after every step (Hypothesis runs the invariants in name order: the sweep first)

    @invariant()
    def invariant_sweep(self) -> None:
        """Every named invariant (TypeOK, BlockConservationInv, ...) holds, in every build."""
        self.cache.check()

    @invariant()
    def model_agrees(self) -> None:
        """The abstract state: entries, pins, block counts, the policy's variables, free, held
        and the door."""
        model, cache = self.model, self.cache
        assert len(cache) == len(model.entries), "model disagrees: number of entries"
        self._entries_agree()
        got = abstract_state(cache._state)
        expected = AbstractState(
            entries=tuple(
                sorted((k, AbstractEntry(e.pins, e.n_blocks)) for k, e in model.entries.items())
            ),
            policy=policy_view(model.policy.variables()),
            free=model.free,
            held=model.held(),
            door=() if model.door is None else tuple(model.door),
        )
        assert got.entries == expected.entries, "model disagrees: entries"
        _policy_agrees(dict(got.policy), dict(expected.policy))
        assert got.free == expected.free, "model disagrees: free count"
        assert got.held == expected.held, "model disagrees: has_held_entries"
        assert got.door == expected.door, f"model disagrees: door {got.door}, model {expected.door}"
        assert got == expected, "model disagrees: abstract state"
        assert cache._state.evictable_blocks == model.evictable(), "model disagrees: evictable"

    def _entries_agree(self) -> None:
        """Each key's entry: presence, pins, flags and block ids (HeldBlocksStableProp)."""
        model, cache = self.model, self.cache
        owned: set[int] = set()
        for key in KEYS:
            entry, want = cache.get(key), model.entries.get(key)
            if want is None:
                assert entry is None, f"model disagrees: {key!r} should be absent, is {entry!r}"
                continue
            assert entry is not None, f"model disagrees: {key!r} should be {want.state()}"
            assert entry.pin_count == want.pins, f"model disagrees: pin count of {key!r}"
            assert entry.ready == (want.pins >= 0) and entry.evictable == (want.pins == 0), (
                f"model disagrees: ready/evictable flags of {key!r}"
            )
            ids = entry.block_ids
            assert type(ids) is tuple and len(ids) == want.n_blocks, (
                f"model disagrees: block count of {key!r}"
            )
            assert ids == want.blocks, f"HeldBlocksStableProp: {key!r} blocks changed"
            assert list(ids) == sorted(set(ids)), (
                f"model disagrees: {key!r} ids not unique and ascending"
            )
            assert all(0 <= b < model.num_blocks for b in ids), (
                f"model disagrees: {key!r} ids out of range"
            )
            assert owned.isdisjoint(ids), f"model disagrees: {key!r} shares blocks with another"
            owned.update(ids)

    @invariant()
    def leases_agree(self) -> None:
        """The live leases: ids, keys and deadlines (LeasePinsInv's tally is the sweep's)."""
        live = {i: (held.key, held.deadline) for i, held in self.cache._state.leases.live.items()}
        want = self.model.leases
        assert live == want, f"model disagrees: live leases {live}, model {want}"


def _policy_agrees(got: dict[str, Any], want: dict[str, Any]) -> None:
    """The policy's variables, one by one, so a failure names the one that differs."""
    assert got.keys() == want.keys(), f"model disagrees: policy variables {sorted(got)}"
    for name, value in want.items():
        kind = "order" if isinstance(value, tuple) and name in ("queue", "order") else "value"
        assert got[name] == value, (
            f"model disagrees: {name} {kind}: cache {got[name]!r}, model {value!r}"
        )


def machine_for(
    policy: type[EvictionPolicy],
    params: st.SearchStrategy[Params] | None = None,
    cache_class: type[EmbeddingCache] = EmbeddingCache,
    label: str = "",
    admission: AdmissionSpec = None,
    contiguity: st.SearchStrategy[int] = SEED_RULE,
) -> type[CacheMachine]:
    """The state machine for ``policy`` (a real one or a planted bug), whose reference
    model is the one registered under ``policy.name``; with ``admission`` (a filter's
    name or class), the cache runs with that filter and the model keeps its door; with
    ``contiguity`` (the bounds k a run draws), the extents allocator and that rule."""
    if params is None:
        params = drawn_params(policy)
    door = ADMISSION_FILTERS[admission] if isinstance(admission, str) else admission
    if door is not None and not (isinstance(door, type) and issubclass(door, Doorkeeper)):
        raise TypeError(f"the model knows the doorkeeper only, not {door!r}")
    return type(
        f"CacheMachine_{label or policy.name}",
        (CacheMachine,),
        {
            "policy_class": policy,
            "params": params,
            "cache_class": cache_class,
            "admission": door,
            "contiguity": contiguity,
        },
    )


#: Runs twice the profile's default length: evictions, ties, caps and ghost hits need
#: a filled pool first. Examples, seed and database follow the profile (conftest.py).
_PROFILE = settings()  # the loaded profile (conftest.py)
STEPS = settings(stateful_step_count=2 * _PROFILE.stateful_step_count)

#: The rule variants each policy's machine runs under: the seed's rule, the doorkeeper
#: (section 13), contiguity with k of 1 to 3 (section 14), and both at once (the
#: filter asked for extra victims too, section 13.1).
VARIANTS: dict[str, dict[str, Any]] = {
    "": {},
    "_doorkeeper": {"admission": Doorkeeper.name},
    "_contiguity": {"contiguity": st.integers(1, 3)},
    "_doorkeeper_contiguity": {"admission": Doorkeeper.name, "contiguity": st.integers(1, 3)},
}

# One TestCase per registered policy and variant: TestCacheMachine_fifo,
# TestCacheMachine_fifo_doorkeeper, TestCacheMachine_fifo_contiguity, ...
for _name, _policy in EVICTION_POLICIES.items():
    for _variant, _rule in VARIANTS.items():
        _case = machine_for(_policy, label=_name + _variant, **_rule).TestCase
        _case.settings = STEPS
        globals()[f"TestCacheMachine_{_name}{_variant}"] = _case
del _name, _policy, _variant, _rule, _case


def test_every_policy_has_a_reference_model_and_planted_bugs_of_its_own() -> None:
    """Coverage of the loop above: no policy runs without its own model, and each has a
    planted bug of its own (besides the shared ones) for the machine to catch."""
    assert set(REFERENCE_MODELS) == set(EVICTION_POLICIES)
    for name, model in REFERENCE_MODELS.items():
        assert model.name == name  # type: ignore[attr-defined]
    own = {policy for bug, policy in STATEFUL_BUGS if bug.kind == "policy"}
    assert own == set(EVICTION_POLICIES)
    # The model's door is the doorkeeper's: a new filter needs a model of its own here.
    assert set(ADMISSION_FILTERS) == {Doorkeeper.name}


# ---------------------------------------------------------------- non-vacuity

#: Every (planted bug, policy) the stateful layer must catch (the one catalogue,
#: embedding_cache_checker.verify.planted): the shared core's bugs under every policy, and
#: each policy's own.
STATEFUL_BUGS: list[tuple[PlantedBug, str]] = list(planted.pairs("stateful"))

#: Finding the bug is the point: no shrinking, a fixed seed, the first failure reported.
QUICK = settings(
    max_examples=300,
    derandomize=True,
    database=None,
    deadline=None,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
    report_multiple_bugs=False,
)

#: What the machine's own checks say when they catch something (besides the invariant
#: sweep's InvariantViolationError): the model comparison, the misuse check, block ids.
CAUGHT_BY = ("model disagrees", "MisuseUnchangedProp", "HeldBlocksStableProp")


def bug_machine(bug: PlantedBug, policy: str) -> type[CacheMachine]:
    """``policy``'s machine with ``bug`` planted: a policy bug as the policy (its model is
    the real policy's), a transition bug as the cache's transition table. Bare bodies, no
    contracts in any build (``checked=False``): what catches the bug is the machine."""
    return machine_for(
        bug.broken_policy or EVICTION_POLICIES[policy],
        st.just(bug.params),
        cache_class=bug.cache_class(policy, checked=False),
        label=f"{bug.name}_{policy}",
        admission=bug.admission_spec(),
        contiguity=st.just(bug.contiguity),
    )


@pytest.mark.parametrize(
    ("bug", "policy"), STATEFUL_BUGS, ids=[f"{b.name}-{p}" for b, p in STATEFUL_BUGS]
)
def test_the_state_machine_catches_a_planted_bug(bug: PlantedBug, policy: str) -> None:
    """Each planted bug makes its policy's machine fail, by one of the machine's own checks."""
    with pytest.raises(Exception) as info:
        run_state_machine_as_test(bug_machine(bug, policy), settings=QUICK)
    message = f"{type(info.value).__name__}: {info.value}"
    swept = isinstance(info.value, InvariantViolationError)
    assert swept or any(what in message for what in CAUGHT_BY), message
