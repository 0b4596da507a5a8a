"""The code a model stands for: its eviction policy and its alloc rule, built from the
model's manifest entry (tla/models.json) and checked against its config.

The policy is a name of ``EVICTION_POLICIES`` with the constructor parameters the
model's ``policy_params`` set (TLA+ constants, each the code policy's attribute of
its snake_case name: ``code_name``); the alloc rule (``CacheRule``) is the entry's
``admission`` filter with its ``DoorCapacity``, or its ``allocator`` with its
``Contiguity`` (spec/SPEC.md sections 13 and 14); an entry with neither has the
seed's rule. The state-graph replay (``replay``, ``lease_replay``), trace
validation and the counterexample replay build the code's side from here.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from embedding_cache import ADMISSION_FILTERS, DEFAULT_ALLOCATOR, AdmissionFilter
from embedding_cache.policies import EVICTION_POLICIES, EvictionPolicy, make_policy
from embedding_cache.verification import AdmissionSpec, CacheState, make_admission

#: What builds the code's policy: a name in ``EVICTION_POLICIES`` or a factory of ``num_blocks``.
PolicyFactory = str | Callable[[int], EvictionPolicy]


#: A TLA+ constant's word boundaries (MaxFreq: Max|Freq).
_WORD = re.compile(r"(?<!^)(?=[A-Z])")


def code_name(constant: str) -> str:
    """The code policy's attribute (and constructor parameter, if it is one) of the same
    meaning as the TLA+ constant ``constant``: its name in snake_case (``Scale`` ->
    ``scale``, ``SmallTarget`` -> ``small_target``); a snake_case name is its own. One rule
    for every policy (tla/README.md), so no policy is listed here. O(len(constant))."""
    return _WORD.sub("_", constant).lower()


def policy_factory(name: str, params: Mapping[str, int] | None = None) -> PolicyFactory:
    """The factory of policy ``name`` with constructor parameters ``params`` (e.g. gdsf's
    ``scale``), or with the TLA+ constants a model sets (``policy_params`` in
    tla/models.json, e.g. ``Scale``): those that are constructor parameters are passed,
    the derived ones (s3fifo's ``SmallTarget``) must agree with the code's
    (``check_constants``).

    Raises:
        ValueError: ``name`` is not a policy of ``EVICTION_POLICIES``.
    """
    kwargs = code_params(name, params or {})
    return functools.partial(EVICTION_POLICIES[name], **kwargs) if kwargs else name


def code_params(name: str, params: Mapping[str, int]) -> dict[str, int]:
    """The constructor parameters of policy ``name`` among ``params`` (given by the code's
    names, or by the TLA+ constants' names, ``code_name``); the others are dropped.
    O(len(params)).

    Raises:
        ValueError: ``name`` is not a policy of ``EVICTION_POLICIES``.
    """
    cls = EVICTION_POLICIES.get(name)
    if cls is None:
        raise ValueError(f"unknown eviction policy {name!r}; known: {sorted(EVICTION_POLICIES)}")
    accepted = inspect.signature(cls).parameters
    kwargs = {code_name(k): v for k, v in params.items()}
    return {k: v for k, v in kwargs.items() if k in accepted}


def _constant_value(policy: EvictionPolicy, constant: str) -> int | None:
    """The code policy's value of TLA+ constant ``constant`` (None: it has no such integer
    attribute, so the constant is not one of its module's). O(1)."""
    value = getattr(policy, code_name(constant), None)
    return value if type(value) is int else None


def policy_constants(policy: EvictionPolicy, names: Iterable[str]) -> dict[str, int]:
    """The TLA+ constants ``names`` of ``policy``'s module (its plan's ``tla_constants``,
    from the manifest), valued as the code's policy has them. O(len(names)).

    Raises:
        ValueError: the code's policy has no integer attribute for one of them.
    """
    values = {name: _constant_value(policy, name) for name in names}
    missing = [name for name, value in values.items() if value is None]
    if missing:
        attrs = [code_name(name) for name in missing]
        raise ValueError(f"the code's {policy.name} has no integer attribute {attrs} for {missing}")
    return {name: value for name, value in values.items() if value is not None}


def check_constants(policy: EvictionPolicy, constants: Mapping[str, object]) -> str | None:
    """None when every constant of ``constants`` (a model's config or ``policy_params``)
    that is one of ``policy``'s (an integer attribute by its ``code_name``) has the code
    policy's value; else what differs. O(len(constants))."""
    for name, given in constants.items():
        value = _constant_value(policy, name)
        if value is not None and str(given).strip() != str(value):
            return f"{name} is {given} in the model but {value} in the code's {policy.name}"
    return None


def derived_constants(
    name: str, constants: Mapping[str, object], num_blocks: int
) -> dict[str, int]:
    """The derived TLA+ constants among ``constants`` (a model's config, e.g. s3fifo's
    ``SmallTarget``), valued as the code's policy ``name`` has them for a pool of
    ``num_blocks`` blocks: the constants that are integer attributes of that policy
    (``code_name``) but not constructor parameters, the policy built with the
    constructor parameters the config sets (gdsf's ``Scale``, kept as given). What a
    config scaled to another pool size rewrites (``tlc.shapes.scale_config``); one rule
    for every policy, so none is listed. O(len(constants)).

    Raises:
        ValueError: ``name`` is not a policy of ``EVICTION_POLICIES``.
    """
    given = {k: int(str(v)) for k, v in constants.items() if re.fullmatch(r"-?\d+", str(v))}
    params = code_params(name, given)
    policy = make_policy(policy_factory(name, params), num_blocks)
    values = {c: _constant_value(policy, c) for c in constants if code_name(c) not in params}
    return {c: value for c, value in values.items() if value is not None}


def policy_variables(policy: PolicyFactory, num_blocks: int) -> tuple[str, ...]:
    """The variables the code's policy is compared on: the names its ``abstract()`` gives.
    O(1) (an empty policy)."""
    return tuple(sorted(make_policy(policy, num_blocks).checks().abstract()))


@dataclass(frozen=True)
class CacheRule:
    """The alloc rule a model's cache runs (spec/SPEC.md sections 13 and 14): its manifest
    entry's ``admission`` (a filter's name in ``ADMISSION_FILTERS``), ``allocator`` and
    ``rule_params`` (the rule's TLA+ constants, each the field of its ``code_name``:
    ``DoorCapacity`` -> ``door_capacity``, ``Contiguity`` -> ``contiguity``). The
    default is the seed's rule: no filter, the default allocator, no contiguity. (The
    same rule read off a recorded cache, as the trace spec's constants, is
    ``trace_rules.TraceRule``: that one is read from a cache, this one builds it.)"""

    #: The admission filter: a name, or a factory (a planted broken filter's class).
    admission: AdmissionSpec = None
    #: The filter's capacity (the doorkeeper's door: TLA+ ``DoorCapacity``); None: its
    #: default.
    door_capacity: int | None = None
    allocator: str = DEFAULT_ALLOCATOR
    #: Victims an alloc may evict beyond need for a free run (TLA+ ``Contiguity``).
    contiguity: int = 0

    @property
    def block_exact(self) -> bool:
        """True when the replay must follow the code's choice of block ids: under
        contiguity, where the free blocks lie decides what a later alloc evicts. O(1)."""
        return self.contiguity > 0

    def constants(self) -> dict[str, int]:
        """The rule's TLA+ constants, as a model's config sets them. O(1)."""
        values = {"DoorCapacity": self.door_capacity, "Contiguity": self.contiguity or None}
        return {name: value for name, value in values.items() if value is not None}

    def filter_factory(self) -> AdmissionSpec:
        """What ``make_admission`` takes for this rule's filter, with its capacity. O(1)."""
        spec = self.admission
        if spec is None or self.door_capacity is None:
            return spec
        cls: Callable[..., AdmissionFilter] = (
            ADMISSION_FILTERS[spec] if isinstance(spec, str) else spec
        )
        return functools.partial(cls, capacity=self.door_capacity)

    def state(self, num_blocks: int, policy: PolicyFactory) -> CacheState:
        """An empty cache state of ``num_blocks`` running ``policy`` under this rule.
        O(num_blocks)."""
        return CacheState(
            num_blocks,
            make_policy(policy, num_blocks),
            self.allocator,
            make_admission(self.filter_factory(), num_blocks),
            self.contiguity,
        )


#: The seed's rule: what every model without an alloc rule of its own runs.
SEED_RULE = CacheRule()


def cache_rule(entry: Mapping[str, Any]) -> CacheRule:
    """The alloc rule of a manifest entry (``admission``, ``allocator``, ``rule_params``;
    the seed's for an entry with none). O(1).

    Raises:
        ValueError: an unknown filter, or a rule constant no ``CacheRule`` field names.
    """
    admission = entry.get("admission")
    if admission is not None and admission not in ADMISSION_FILTERS:
        raise ValueError(
            f"{entry.get('name')}: unknown admission filter {admission!r}; "
            f"known: {sorted(ADMISSION_FILTERS)}"
        )
    params = {code_name(str(k)): int(v) for k, v in (entry.get("rule_params") or {}).items()}
    unknown = sorted(set(params) - {"door_capacity", "contiguity"})
    if unknown:
        raise ValueError(f"{entry.get('name')}: unknown rule_params {unknown}")
    return CacheRule(
        admission=admission,
        door_capacity=params.get("door_capacity"),
        allocator=str(entry.get("allocator") or DEFAULT_ALLOCATOR),
        contiguity=params.get("contiguity", 0),
    )


def check_rule(rule: CacheRule, constants: Mapping[str, object]) -> str | None:
    """None when the model's config (``constants``) sets the rule's constants as ``rule``
    has them (a config with a door or contiguity the manifest does not say is a
    difference too); else what differs. O(1)."""
    mine = rule.constants()
    for name in ("DoorCapacity", "Contiguity"):
        given = constants.get(name)
        value = mine.get(name)
        if given is None and value is None:
            continue
        if str(given).strip() != str(value if value is not None else 0):
            return f"{name} is {given} in the model's config but {value} in its manifest entry"
    return None
