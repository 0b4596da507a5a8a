"""The catalogue of planted bugs: one list, used by the tests and by ``embedding-cache verify``.

Every verification layer must be shown to catch a real bug. The bugs it is
shown on are listed once, here, as ``PlantedBug`` entries in ``PLANTED``; the
contract tests, the stateful and differential tests, CrossHair, the
state-graph replay and trace validation all take them from this list.

Two kinds:

* ``kind="transition"``, ``policy=None``: a broken copy of one transition of
  the shared core (``planted.core``), wearing the real contract. It talks to
  the policy only through the hooks, so it is a bug under every policy
  (``bug.policies()`` is every name in ``EVICTION_POLICIES``).
* ``kind="policy"``, ``policy="fifo"|"gdsf"|"s3fifo"``: a broken subclass of
  that policy (``planted.policies``, ``bug.broken_policy``) whose order rule
  is wrong; the transitions are the real ones. ``transition`` names the
  operation whose call shows it (whose contract reports it; the CrossHair
  target).

And, kept apart in ``QUERY_BUGS`` (not in ``PLANTED``): ``kind="query"``,
``policy=None``: a wrong answer from a query (``has_held_entries``) over a
well-formed state. Every layer of ``LAYERS`` reads the state itself (through
``abstraction.abstract_state``, which asks the real query), so all are
blind to it by construction; the callers of the cache's own method catch it:
the counterexample replay of ``embedding-cache tlc --repro`` (and a cache
built with ``bug.cache_class``). ``call`` runs a query step of a witness.

Selecting: ``by_name(name)`` (either tuple); ``for_tla_model(model)`` -- the bug
planting the mistake of a TLA+ bug model; ``for_policy(policy, layer=None)`` -- the bugs
under a policy (shared ones first), optionally only those ``layer`` must
catch (``bug.caught_by(layer)``, ``layer`` in ``LAYERS``); ``pairs(layer)`` --
every (bug, policy) pair, policy by policy.

Building something with a bug (each O(1), but ``cache``/``state``: O(num_blocks)):

* ``bug.operations(checked=False)`` -- every operation by name (as
  ``transitions.OPERATIONS``), the bug's body swapped in for a transition
  bug. ``checked=False``: bare bodies, no contract code in any build (the
  layer under test must catch the bug itself); ``checked=True``: the bodies
  with the build's contracts (the same as bare ones in the default build).
* ``bug.eviction(policy=None, **params)`` -- what ``EmbeddingCache(n,
  eviction=...)`` takes: the broken class for a policy bug, the named real
  policy for a transition bug ("fifo" when None); with ``bug.params`` (the
  bug's own constructor parameters, e.g. gdsf's small ``scale``) updated by
  ``params``.
* ``bug.cache_class(policy=None, checked=False)`` -- an ``EmbeddingCache``
  subclass named after the bug whose transition table (``_ops``) is
  ``operations(checked)`` and whose ``eviction`` defaults to
  ``eviction(policy)``: a drop-in for ``EmbeddingCache`` in the stateful and
  differential tests. ``bug.cache(num_blocks, policy, checked, **params)``
  and ``bug.state(num_blocks, policy, **params)`` build one directly.
* ``bug.plant(state)`` -- put a policy bug into a well-formed state the real
  code built (re-types its policy in place; nothing for a transition bug):
  one broken step from a good state, as CrossHair checks.
* ``run_witness(bug, policy)`` -- the bug's ``witness``: concrete calls on a
  ``witness_blocks`` pool, the real code for all but the last, the bug for
  the last. In the checked build the last call breaks a condition in
  ``bug.expected(policy)``; a bug no contract can see (``"contracts" in
  bug.blind``) instead leaves a different result or abstract state.

Expected names: ``expect`` lists the condition names (spec/NAMES.md) that may
report the bug; ``ORDER`` stands for the running policy's order property
(``EvictionPolicy.order_property``, what ``contracts._order_post``
reports), which ``bug.expected(policy)`` fills in. ``blind`` lists the
layers (``LAYERS``) that cannot catch it, with the reason in ``why_blind``.
``tla_model`` names the TLA+ bug model (tla/models.json) planting the same
mistake, when there is one.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar, Literal

from embedding_cache import transitions
from embedding_cache.cache import EmbeddingCache
from embedding_cache.free_blocks import DEFAULT_ALLOCATOR
from embedding_cache.policies import EVICTION_POLICIES, EvictionPolicy, PolicySpec, make_policy
from embedding_cache.state import CacheState

from . import core, policies

#: In ``expect``: the running policy's order property (EvictOldestFirstProp, ...).
ORDER = "<order property>"
#: The verification layers a planted bug is shown to (``blind`` names some of them).
LAYERS = ("contracts", "crosshair", "stateful", "replay", "traces")

Kind = Literal["transition", "policy", "query"]
#: One call of a witness: ("alloc", key, n_blocks) or (operation, key).
Call = tuple[str, str] | tuple[str, str, int]
#: Operations by name, as ``transitions.OPERATIONS``.
Operations = dict[str, Callable[..., Any]]

#: The policy a transition bug runs under when none is named.
DEFAULT_POLICY = "fifo"


@dataclass(frozen=True)
class PlantedBug:
    """One planted bug: what is broken, where, under which policies, and what must catch it."""

    #: The bug's name (CamelCase; mostly the suffix of its TLA+ bug model, if any).
    name: str
    #: None: the shared core (a bug under every policy); else the policy it breaks.
    policy: str | None
    kind: Kind
    #: Transition bug: the operation whose body is replaced. Policy bug: the
    #: operation whose call shows it (whose contract reports it: the CrossHair target).
    transition: str
    #: Condition names that may report it (``ORDER``: the policy's order property);
    #: empty when no contract states the rule it breaks (then "contracts" is blind).
    expect: frozenset[str]
    #: The TLA+ bug model planting the same mistake (tla/models.json), or None.
    tla_model: str | None
    #: Concrete calls; every call but the last is legal, the last trips the bug.
    witness: tuple[Call, ...]
    #: The pool size the witness runs on.
    witness_blocks: int = 3
    #: Transition bug: the broken copy, wearing the real contract.
    body: Callable[..., Any] | None = field(default=None, repr=False)
    #: Policy bug: the broken subclass of ``EVICTION_POLICIES[policy]``.
    broken_policy: type[EvictionPolicy] | None = field(default=None, repr=False)
    #: The policy constructor's parameters the bug runs with by default, as pairs.
    param_items: tuple[tuple[str, int], ...] = ()
    #: The layers (``LAYERS``) that cannot catch it, and why.
    blind: frozenset[str] = frozenset()
    why_blind: str = ""

    # ------------------------------------------------------------ what it is

    @property
    def summary(self) -> str:
        """The one-line description from the broken code's docstring. O(docstring)."""
        obj: object = self.body if self.body is not None else self.broken_policy
        doc = inspect.getdoc(obj) or ""
        first = " ".join(doc.split("\n\n", 1)[0].split())
        return first.split("): ", 1)[-1]

    @property
    def target(self) -> str:
        """The dotted name CrossHair checks: the broken body, or the real transition. O(1)."""
        if self.body is not None:
            return f"{self.body.__module__}.{self.body.__name__}"
        return f"{transitions.__name__}.{self.transition}"

    @property
    def params(self) -> dict[str, int]:
        """The policy constructor's parameters the bug runs with by default. O(1)."""
        return dict(self.param_items)

    @property
    def cls(self) -> type[EvictionPolicy]:
        """The policy class it runs with: the broken one, or fifo's for a shared bug. O(1)."""
        return self.broken_policy or EVICTION_POLICIES[DEFAULT_POLICY]

    def policies(self) -> tuple[str, ...]:
        """The policies it is a bug under: every one for a shared bug. O(policies)."""
        return tuple(EVICTION_POLICIES) if self.policy is None else (self.policy,)

    def applies_to(self, policy: str) -> bool:
        """True when it is a bug under ``policy``. O(1)."""
        return self.policy is None or self.policy == policy

    def caught_by(self, layer: str) -> bool:
        """True when ``layer`` (one of ``LAYERS``) must catch it. O(1)."""
        if layer not in LAYERS:
            raise ValueError(f"unknown layer {layer!r}; layers: {LAYERS}")
        return layer not in self.blind

    def expected(self, policy: str) -> frozenset[str]:
        """``expect`` with ``ORDER`` replaced by ``policy``'s order property. O(|expect|)."""
        self._require(policy)
        order = EVICTION_POLICIES[policy].order_property
        return frozenset(order if name == ORDER else name for name in self.expect)

    # ------------------------------------------------------------ building with it

    def operations(self, checked: bool = False) -> Operations:
        """Every operation by name, with this bug's body for a transition bug. O(1).

        ``checked=False``: bare bodies, no contract code in any build.
        ``checked=True``: the bodies with the build's contracts.
        """
        ops = real_operations(checked)
        if self.body is not None:
            ops[self.transition] = self.body if checked else inspect.unwrap(self.body)
        return ops

    def eviction(self, policy: str | None = None, **params: Any) -> PolicySpec:
        """What ``EmbeddingCache(n, eviction=...)`` takes to run with this bug. O(1).

        A policy bug: its broken class (``policy`` must be None or its own).
        A transition bug: the named real policy (``DEFAULT_POLICY`` when None).
        With ``self.params`` updated by ``params`` (constructor keywords).
        """
        name = policy or self.policy or DEFAULT_POLICY
        self._require(name)
        cls: Callable[..., EvictionPolicy] = self.broken_policy or EVICTION_POLICIES[name]
        merged = {**self.params, **params}
        return partial(cls, **merged) if merged else cls

    def plant(self, s: CacheState) -> None:
        """Put this bug into the well-formed state ``s`` (a policy bug; else nothing). O(1).

        Re-types ``s.policy`` (an instance of the real policy) as the broken
        subclass, which has the same fields, and rebinds the hooks.

        Raises:
            TypeError: ``s.policy`` is not an instance of exactly the real policy.
        """
        broken = self.broken_policy
        if broken is None:
            return
        real = EVICTION_POLICIES[str(self.policy)]
        if type(s.policy) is not real:
            have = type(s.policy).__name__
            raise TypeError(f"{self.name}: the state's policy is {have}, not {real.__name__}")
        s.policy.__class__ = broken
        s.set_policy(s.policy)

    def state(self, num_blocks: int, policy: str | None = None, **params: Any) -> CacheState:
        """An empty state whose policy carries this bug (for a policy bug). O(num_blocks)."""
        return CacheState(num_blocks, make_policy(self.eviction(policy, **params), num_blocks))

    def cache_class(self, policy: str | None = None, checked: bool = False) -> type[EmbeddingCache]:
        """An ``EmbeddingCache`` subclass that runs with this bug. O(1) (built once).

        Its transition table is ``operations(checked)``; its ``eviction``
        defaults to ``eviction(policy)``. Named after the bug (plus the policy,
        for a shared bug under another policy than fifo), with class
        attributes ``planted`` (this entry) and ``planted_policy``.
        """
        name = policy or self.policy or DEFAULT_POLICY
        self._require(name)
        key = (self.name, name, checked)
        made = _CACHE_CLASSES.get(key)
        if made is None:
            made = _CACHE_CLASSES[key] = _make_cache_class(self, name, checked)
        return made

    def cache(
        self, num_blocks: int, policy: str | None = None, checked: bool = False, **params: Any
    ) -> EmbeddingCache:
        """A cache running with this bug. O(num_blocks)."""
        return self.cache_class(policy, checked)(num_blocks, self.eviction(policy, **params))

    def _require(self, policy: str | None) -> None:
        if policy not in EVICTION_POLICIES or not self.applies_to(policy):
            raise ValueError(f"planted bug {self.name} is not a bug under policy {policy!r}")


def real_operations(checked: bool = False) -> Operations:
    """The real operations by name (``transitions.OPERATIONS``); bare unless ``checked``. O(1)."""
    ops = dict(transitions.OPERATIONS)
    return ops if checked else {name: inspect.unwrap(func) for name, func in ops.items()}


_CACHE_CLASSES: dict[tuple[str, str, bool], type[EmbeddingCache]] = {}


def _make_cache_class(bug: PlantedBug, policy: str, checked: bool) -> type[EmbeddingCache]:
    table = transitions.Transitions(bug.operations(checked))
    default = bug.eviction(policy)

    class PlantedCache(EmbeddingCache):
        planted: ClassVar[PlantedBug] = bug
        planted_policy: ClassVar[str] = policy

        __slots__ = ()

        def __init__(
            self,
            num_blocks: int,
            eviction: PolicySpec = default,
            allocator: str = DEFAULT_ALLOCATOR,
        ) -> None:
            super().__init__(num_blocks, eviction, allocator)
            self._ops = table

    suffix = "" if policy == (bug.policy or DEFAULT_POLICY) else f"_{policy}"
    PlantedCache.__name__ = PlantedCache.__qualname__ = f"{bug.name}{suffix}"
    PlantedCache.__doc__ = f"EmbeddingCache with the planted bug {bug.name}: {bug.summary}"
    return PlantedCache


# ---------------------------------------------------------------- the catalogue


def _transition(
    name: str,
    body: Callable[..., Any],
    expect: tuple[str, ...],
    witness: tuple[Call, ...],
    tla_model: str | None = None,
) -> PlantedBug:
    transition = witness[-1][0]
    return PlantedBug(
        name, None, "transition", transition, frozenset(expect), tla_model, witness, body=body
    )


def _policy(
    name: str,
    broken: type[EvictionPolicy],
    expect: tuple[str, ...],
    witness: tuple[Call, ...],
    tla_model: str | None = None,
    blocks: int = 3,
    params: Mapping[str, int] | None = None,
    why_blind: str = "",
) -> PlantedBug:
    policy = next(n for n, cls in EVICTION_POLICIES.items() if issubclass(broken, cls))
    blind = frozenset(("contracts", "crosshair") if not expect else ())
    return PlantedBug(
        name, policy, "policy", witness[-1][0], frozenset(expect), tla_model, witness, blocks,
        broken_policy=broken, param_items=tuple(sorted((params or {}).items())), blind=blind,
        why_blind=why_blind,
    )  # fmt: skip


#: Small gdsf parameters: priorities tie and use counts reach their cap within a few steps.
GDSF_SMALL: Mapping[str, int] = {"scale": 4, "max_freq": 2}

# Witness building blocks (a pool of 3 blocks).
_READY_ABC: tuple[Call, ...] = (
    ("alloc", "a", 1), ("mark_ready", "a"),
    ("alloc", "b", 1), ("mark_ready", "b"),
    ("alloc", "c", 1), ("mark_ready", "c"),
)  # fmt: skip
_PINNED_A: tuple[Call, ...] = (("alloc", "a", 2), ("mark_ready", "a"), ("pin", "a"))
#: s3fifo: "a" used once and back in S's head, then "b" and "c" behind it; alloc "d".
_USED_SMALL_HEAD: tuple[Call, ...] = (
    ("alloc", "a", 1), ("mark_ready", "a"), ("pin", "a"), ("unpin", "a"),
    ("alloc", "b", 1), ("mark_ready", "b"), ("alloc", "c", 1), ("mark_ready", "c"),
    ("alloc", "d", 1),
)  # fmt: skip

#: Every planted bug: the shared core's first, then each policy's.
PLANTED: tuple[PlantedBug, ...] = (
    # ---- shared core: broken transitions (a bug under every policy)
    _transition(
        "EvictOneTooMany", core.alloc_evict_one_too_many,
        (ORDER, "BlockConservationInv", "EvictableCountInv"),
        (*_READY_ABC, ("alloc", "d", 1)), "MCBugEvictOneTooMany",
    ),
    _transition(
        "EvictBeforeFailFast", core.alloc_evict_before_fail_fast,
        ("FailedAllocUnchangedProp",),
        (("alloc", "n", 1), ("alloc", "a", 1), ("mark_ready", "a"), ("alloc", "b", 1),
         ("mark_ready", "b"), ("alloc", "d", 3)),
        "MCBugEvictBeforeFailFast",
    ),
    _transition(
        "FailFastFreeOnly", core.alloc_fail_fast_free_only,
        ("AllocFailsOnlyWhenShortProp",),
        (*_READY_ABC, ("alloc", "d", 2)), "MCBugFailFastFreeOnly",
    ),
    _transition(
        "MarkReadyForgetsCount", core.mark_ready_forgets_count,
        ("EvictableCountInv",),
        (("alloc", "a", 2), ("mark_ready", "a")), "MCBugMarkReadyForgetsCount",
    ),
    _transition(
        "MarkReadyForgetsPolicy", core.mark_ready_forgets_policy,
        ("EvictableSetInv",),
        (("alloc", "a", 2), ("mark_ready", "a")),
    ),
    _transition(
        "PinKeepsEvictable", core.pin_keeps_evictable,
        ("EvictableSetInv", "EvictableCountInv"),
        (*_READY_ABC, ("pin", "b")), "MCBugEvictPinned",
    ),
    _transition(
        "PinAlwaysDecrements", core.pin_always_uncounts,
        ("EvictableCountInv",),
        (*_PINNED_A, ("pin", "a")), "MCBugPinAlwaysDecrements",
    ),
    _transition(
        "PinIfReadyPinsNotReady", core.pin_if_ready_pins_not_ready,
        ("MisuseUnchangedProp",),
        (("alloc", "a", 1), ("pin_if_ready", "a")),
    ),
    _transition(
        "PinIfReadyForgetsPin", core.pin_if_ready_forgets_pin,
        ("EvictableSetInv",),
        (("alloc", "a", 1), ("mark_ready", "a"), ("pin_if_ready", "a")),
    ),
    _transition(
        "UnpinForgetsRelease", core.unpin_forgets_release,
        ("EvictableSetInv",),
        (("alloc", "z", 1), ("mark_ready", "z"), *_PINNED_A, ("unpin", "a")),
    ),
    _transition(
        "UnpinForgetsCount", core.unpin_forgets_count,
        ("EvictableCountInv",),
        (*_PINNED_A, ("unpin", "a")), "MCBugUnpinForgetsCount",
    ),
    _transition(
        "UnpinDoubleAppend", core.unpin_always_releases,
        ("EvictableSetInv",),
        (*_PINNED_A, ("pin", "a"), ("unpin", "a")), "MCBugUnpinDoubleAppend",
    ),
    _transition(
        "DiscardKeepsBlocks", core.discard_keeps_blocks,
        ("BlockConservationInv",),
        (("alloc", "a", 2), ("discard", "a")), "MCBugDiscardKeepsBlocks",
    ),
    # ---- fifo: oldest first
    _policy(
        "EvictNewest", policies.FifoEvictNewest,
        (ORDER,), (*_READY_ABC, ("alloc", "d", 1)), "MCBugEvictNewest",
    ),
    _policy(
        "FifoHeadInsert", policies.FifoInsertAtHead,
        (ORDER,),
        (("alloc", "a", 1), ("mark_ready", "a"), ("alloc", "b", 1), ("mark_ready", "b")),
        "MCBugFifoHeadInsert",
    ),
    # ---- gdsf: lowest priority first, the clock raised to each victim's
    _policy(
        "GdsfEvictHighest", policies.GdsfEvictHighest,
        (ORDER,),
        (("alloc", "a", 1), ("mark_ready", "a"), ("alloc", "b", 2), ("mark_ready", "b"),
         ("alloc", "c", 1)),
        params=GDSF_SMALL,
    ),
    _policy(
        "GdsfEvictFirstJoined", policies.GdsfEvictFirstJoined,
        (ORDER,),
        (("alloc", "a", 1), ("mark_ready", "a"), ("alloc", "b", 2), ("mark_ready", "b"),
         ("alloc", "c", 1)),
        "MCBugGdsfEvictFirstJoined", params=GDSF_SMALL,
    ),
    _policy(
        "GdsfHoldKeepsOrder", policies.GdsfHoldKeepsOrder,
        ("EvictableSetInv",), (("alloc", "a", 1), ("mark_ready", "a"), ("pin", "a")),
        "MCBugGdsfHoldKeepsOrder", params=GDSF_SMALL,
    ),
    _policy(
        "GdsfForgetsClock", policies.GdsfForgetsClock,
        (ORDER,), (("alloc", "a", 1), ("mark_ready", "a"), ("alloc", "b", 3)),
        "MCBugGdsfClockStuck", params=GDSF_SMALL,
    ),
    _policy(
        "GdsfJoinIgnoresClock", policies.GdsfJoinIgnoresClock,
        (ORDER,),
        (("alloc", "a", 1), ("mark_ready", "a"), ("alloc", "b", 3), ("mark_ready", "b")),
        params=GDSF_SMALL,
    ),
    _policy(
        "GdsfIgnoresHits", policies.GdsfIgnoresHits,
        (), (("alloc", "a", 1), ("mark_ready", "a"), ("pin", "a")),
        params=GDSF_SMALL,
        why_blind="no contract states the use count: the policy interface has no "
        "verification method for hit, and priorities are checked against the policy's "
        "own freq",
    ),
    # ---- s3fifo: S drained first; a used S head moves to M, cleared
    _policy(
        "S3FifoNeverPromotes", policies.S3FifoNeverPromotes,
        (ORDER,), _USED_SMALL_HEAD,
    ),
    _policy(
        "S3FifoPromoteKeepsCount", policies.S3FifoPromoteKeepsCount,
        (ORDER,), _USED_SMALL_HEAD,
    ),
    _policy(
        "S3FifoMainFirst", policies.S3FifoMainFirst,
        (ORDER,), (*_USED_SMALL_HEAD, ("mark_ready", "d"), ("alloc", "e", 1)),
        "MCBugS3FifoMainFirst",
    ),
    _policy(
        "S3FifoHoldSmallOnly", policies.S3FifoHoldSmallOnly,
        ("EvictableSetInv",), (*_USED_SMALL_HEAD, ("pin", "a")),
        "MCBugS3FifoHoldSmallOnly",
    ),
    _policy(
        "S3FifoIgnoresGhost", policies.S3FifoIgnoresGhost,
        (), (*_READY_ABC, ("alloc", "d", 1), ("alloc", "a", 1)),
        why_blind="no contract states where admit homes a key: the policy interface has no "
        "verification method for admit, and joined_ok checks the key's own home",
    ),
)  # fmt: skip

#: Bugs in a query's answer, which no layer of ``LAYERS`` can see (module docstring).
QUERY_BUGS: tuple[PlantedBug, ...] = (
    PlantedBug(
        "HeldIgnoresPins", None, "query", "has_held_entries", frozenset(("HeldEntriesInv",)),
        "MCBugHeldIgnoresPins", (*_PINNED_A, ("has_held_entries", "")),
        body=core.has_held_entries_not_ready_only, blind=frozenset(LAYERS),
        why_blind="a query's answer, not the state: every layer reads the state (the "
        "abstraction asks the real has_held_entries); the cache's own method is wrong",
    ),
)  # fmt: skip

_BY_NAME: dict[str, PlantedBug] = {bug.name: bug for bug in (*PLANTED, *QUERY_BUGS)}


def by_name(name: str) -> PlantedBug:
    """The catalogue entry called ``name`` (in ``PLANTED`` or ``QUERY_BUGS``). O(1).

    Raises:
        KeyError: no planted bug has that name.
    """
    return _BY_NAME[name]


def for_tla_model(model: str) -> PlantedBug | None:
    """The catalogue entry planting the mistake of the TLA+ bug model ``model``
    (its ``tla_model``), or None. O(|PLANTED| + |QUERY_BUGS|)."""
    return next((bug for bug in _BY_NAME.values() if bug.tla_model == model), None)


def for_policy(policy: str, layer: str | None = None) -> tuple[PlantedBug, ...]:
    """The bugs under ``policy`` (the shared ones, then its own), optionally only
    those ``layer`` must catch. O(|PLANTED|)."""
    return tuple(
        bug for bug in PLANTED if bug.applies_to(policy) and (layer is None or bug.caught_by(layer))
    )


def pairs(layer: str | None = None) -> Iterator[tuple[PlantedBug, str]]:
    """Every (bug, policy) the bug applies to, policy by policy, optionally only those
    ``layer`` must catch. O(|PLANTED| * policies)."""
    for policy in EVICTION_POLICIES:
        for bug in for_policy(policy, layer):
            yield bug, policy


#: The queries a witness may call (on the whole state: the step's key is unused).
QUERIES = ("has_held_entries",)


def call(ops: Mapping[str, Callable[..., Any]], s: CacheState, step: Call) -> object:
    """Run one witness call on ``s``; a query from ``ops`` or, when absent, the real one.
    O(the operation)."""
    op, key, *n = step
    if op in QUERIES:
        return ops.get(op, getattr(transitions.REAL, op))(s)
    return ops[op](s, key, *n)


def run_witness(
    bug: PlantedBug,
    policy: str | None = None,
    *,
    planted: bool = True,
    checked: bool = True,
    **params: Any,
) -> tuple[object, CacheState]:
    """Run ``bug``'s witness under ``policy``: the real code, then the last call with the bug.

    Builds a ``witness_blocks`` pool with the real policy (``bug.params``
    updated by ``params``), runs every call but the last with the real
    operations, plants the bug (unless ``planted`` is False: a control run) and
    runs the last call. Returns its result and the state; a contract
    violation propagates. ``checked``: with the build's contracts, else bare
    bodies. O(witness).
    """
    name = policy or bug.policy or DEFAULT_POLICY
    bug.expected(name)  # validates the policy
    real = real_operations(checked)
    spec = partial(EVICTION_POLICIES[name], **{**bug.params, **params})
    s = CacheState(bug.witness_blocks, make_policy(spec, bug.witness_blocks))
    for step in bug.witness[:-1]:
        call(real, s, step)
    ops = real
    if planted:
        bug.plant(s)
        ops = bug.operations(checked)
    return call(ops, s, bug.witness[-1]), s


__all__ = [
    "DEFAULT_POLICY",
    "GDSF_SMALL",
    "LAYERS",
    "ORDER",
    "PLANTED",
    "QUERIES",
    "QUERY_BUGS",
    "Call",
    "Kind",
    "Operations",
    "PlantedBug",
    "by_name",
    "call",
    "for_policy",
    "for_tla_model",
    "pairs",
    "real_operations",
    "run_witness",
]
