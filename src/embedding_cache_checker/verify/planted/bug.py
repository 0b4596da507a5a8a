"""What a planted bug is, and how to build a cache, a state or a witness run with one.

``PlantedBug`` is one catalogue entry; ``transition_bug`` and ``policy_bug``
make the entries of the shared core (``planted.core``) and of each policy
(``planted.<policy>``); ``PlantedPolicy`` is the base of every broken policy
class. The catalogue itself, and how to select from it, is ``planted``
(its ``__init__``).
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar, Literal

from embedding_cache import ADMISSION_FILTERS, DEFAULT_ALLOCATOR, AdmissionFilter, EmbeddingCache
from embedding_cache.policies import (
    DEFAULT_POLICY,
    EVICTION_POLICIES,
    EvictionPolicy,
    PolicySpec,
    make_policy,
)
from embedding_cache.verification import (
    LEASE_OPERATIONS,
    AdmissionSpec,
    CacheState,
    Transitions,
    install_transitions,
    make_admission,
    transitions,
)

from ..replay import Operations

#: In ``expect``: the running policy's order property (EvictOldestFirstProp, ...).
ORDER = "<order property>"
#: The verification layers a planted bug is shown to (``blind`` names some of them).
LAYERS = ("contracts", "crosshair", "stateful", "replay", "traces")

Kind = Literal["transition", "policy", "admission", "query"]
#: One call of a witness: ("alloc", key, n_blocks) or (operation, key).
WitnessCall = tuple[str, str] | tuple[str, str, int]


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
    witness: tuple[WitnessCall, ...]
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
    #: The admission filter the bug runs with (a name of ``ADMISSION_FILTERS``), or None.
    admission: str | None = None
    #: A bug of the filter itself: the broken subclass of ``ADMISSION_FILTERS[admission]``
    #: (no field of its own, so ``plant`` re-types a real one in place).
    broken_admission: type[AdmissionFilter] | None = field(default=None, repr=False)
    #: The contiguity bound k the bug runs with (> 0: on the extents allocator), or 0.
    contiguity: int = 0

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
        if self.body is None:
            return ops
        return {**ops, self.transition: self.body if checked else inspect.unwrap(self.body)}

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
        subclass, which has the same fields, and rebinds the hooks; for a bug of
        the admission filter, re-types ``s.admission`` likewise.

        Raises:
            TypeError: ``s.policy`` (or ``s.admission``) is not an instance of
                exactly the real class.
        """
        door = self.broken_admission
        if door is not None:
            real_door = ADMISSION_FILTERS[str(self.admission)]
            if type(s.admission) is not real_door:
                raise TypeError(f"{self.name}: the state's filter is not a {real_door.__name__}")
            s.admission.__class__ = door
        broken = self.broken_policy
        if broken is None:
            return
        real = EVICTION_POLICIES[str(self.policy)]
        if type(s.policy) is not real:
            have = type(s.policy).__name__
            raise TypeError(f"{self.name}: the state's policy is {have}, not {real.__name__}")
        s.policy.__class__ = broken
        s.set_policy(s.policy)

    def admission_spec(self) -> AdmissionSpec:
        """What ``EmbeddingCache(n, admission=...)`` takes to run with this bug: the broken
        filter for a bug of the filter, else the named real one (or None). O(1)."""
        return self.broken_admission or self.admission

    def state(self, num_blocks: int, policy: str | None = None, **params: Any) -> CacheState:
        """An empty state whose policy (or admission filter) carries this bug. O(num_blocks)."""
        return CacheState(
            num_blocks,
            make_policy(self.eviction(policy, **params), num_blocks),
            self.allocator,
            make_admission(self.admission_spec(), num_blocks),
            self.contiguity,
        )

    @property
    def allocator(self) -> str:
        """The allocator the bug runs on: extents with contiguity, else the default. O(1)."""
        return "extents" if self.contiguity else DEFAULT_ALLOCATOR

    def cache_class(self, policy: str | None = None, checked: bool = False) -> type[EmbeddingCache]:
        """An ``EmbeddingCache`` subclass that runs with this bug. O(1) (built once).

        Its transition table is ``operations(checked)``; its ``eviction``
        defaults to ``eviction(policy)``. Named after the bug (plus the policy,
        for a shared bug under another policy than fifo), with class
        attribute ``planted`` (this entry).
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
    """The real operations by name: the core's (``transitions.OPERATIONS``) and the
    leases' (``LEASE_OPERATIONS``); bare unless ``checked``. O(1)."""
    ops = {**transitions.OPERATIONS, **LEASE_OPERATIONS}
    return ops if checked else {name: inspect.unwrap(func) for name, func in ops.items()}


_CACHE_CLASSES: dict[tuple[str, str, bool], type[EmbeddingCache]] = {}


def _make_cache_class(bug: PlantedBug, policy: str, checked: bool) -> type[EmbeddingCache]:
    table = Transitions(bug.operations(checked))
    default = bug.eviction(policy)
    door = bug.admission_spec()

    class PlantedCache(EmbeddingCache):
        planted: ClassVar[PlantedBug] = bug

        __slots__ = ()

        def __init__(
            self,
            num_blocks: int,
            eviction: PolicySpec = default,
            allocator: str = bug.allocator,
            clock: Callable[[], float] = time.monotonic,
            admission: AdmissionSpec = door,
            contiguity: int = bug.contiguity,
        ) -> None:
            super().__init__(num_blocks, eviction, allocator, clock, admission, contiguity)
            install_transitions(self, table)

    suffix = "" if policy == (bug.policy or DEFAULT_POLICY) else f"_{policy}"
    PlantedCache.__name__ = PlantedCache.__qualname__ = f"{bug.name}{suffix}"
    PlantedCache.__doc__ = f"EmbeddingCache with the planted bug {bug.name}: {bug.summary}"
    return PlantedCache


class PlantedPolicy(EvictionPolicy):
    """Base of the broken policies. A broken class adds no field (``__slots__ = ()``),
    so a well-formed state's policy can be re-typed in place (``PlantedBug.plant``),
    and its verification side stays the real policy's (``checks_class`` is
    inherited): the real rule judges the broken hooks. A copy of a state keeps
    the broken class (``CacheState.copy``)."""

    __slots__ = ()


def transition_bug(
    name: str,
    body: Callable[..., Any],
    expect: tuple[str, ...],
    witness: tuple[WitnessCall, ...],
    tla_model: str | None = None,
) -> PlantedBug:
    transition = witness[-1][0]
    return PlantedBug(
        name, None, "transition", transition, frozenset(expect), tla_model, witness, body=body
    )


def policy_bug(
    name: str,
    broken: type[EvictionPolicy],
    expect: tuple[str, ...],
    witness: tuple[WitnessCall, ...],
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


#: Witness building blocks (a pool of 3 blocks): three ready entries of one block each.
READY_ABC: tuple[WitnessCall, ...] = (
    ("alloc", "a", 1), ("mark_ready", "a"),
    ("alloc", "b", 1), ("mark_ready", "b"),
    ("alloc", "c", 1), ("mark_ready", "c"),
)  # fmt: skip
PINNED_A: tuple[WitnessCall, ...] = (("alloc", "a", 2), ("mark_ready", "a"), ("pin", "a"))
