"""The alloc rule: what an alloc may do beyond the seed's, as the checks build and read it.

spec/SPEC.md sections 13 (admission) and 14 (contiguity) change what an alloc may do.
``AllocRule`` is that rule, one class for every side that needs it:

* a model's rule, from its manifest entry (``rule_of_entry``: ``admission``,
  ``allocator``, ``rule_params``), builds the code's cache in the state-graph replay
  (``AllocRule.state``) and is checked against the model's config (``check_rule``);
* a recorded cache's rule (``rule_of_cache``) sets the trace spec's constants
  (``AllocRule.trace_constants``: tla/trace/TracePolicy.tla's ``Contiguity``,
  ``Filtered`` and ``DoorCapacity``), so trace validation checks each alloc under it.

``SEED_RULE`` is the seed's: no filter, the default allocator, no contiguity.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from embedding_cache import (
    ADMISSION_FILTERS,
    DEFAULT_ALLOCATOR,
    AdmissionFilter,
    Doorkeeper,
    EmbeddingCache,
)
from embedding_cache.policies import make_policy
from embedding_cache.verification import AdmissionSpec, CacheState, make_admission, state_of

from .model_code import PolicyFactory, code_name

__all__ = ["SEED_RULE", "AllocRule", "check_rule", "rule_of_cache", "rule_of_entry"]


@dataclass(frozen=True)
class AllocRule:
    """The alloc rule a cache runs (spec/SPEC.md sections 13 and 14): its admission filter
    (a name in ``ADMISSION_FILTERS``, or a planted broken filter's class) with its
    capacity, its allocator and its contiguity bound. The fields are the code's names of
    the rule's TLA+ constants (``code_name``: ``DoorCapacity`` -> ``door_capacity``,
    ``Contiguity`` -> ``contiguity``)."""

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

    def trace_constants(self) -> dict[str, str]:
        """The trace config's lines for the rule, by constant (tla/trace/TracePolicy.tla:
        ``Filtered`` says whether a filter runs; ``DoorCapacity`` is ASSUMEd >= 1, so a
        rule without a filter sets 1). O(1)."""
        return {
            "Contiguity": str(self.contiguity),
            "Filtered": "FALSE" if self.admission is None else "TRUE",
            "DoorCapacity": str(self.door_capacity or 1),
        }

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


#: The seed's rule: what every model without an alloc rule of its own runs, and what a
#: cache built with no filter and no contiguity on the default allocator runs.
SEED_RULE = AllocRule()


def rule_of_entry(entry: Mapping[str, Any]) -> AllocRule:
    """The alloc rule of a manifest entry (``admission``, ``allocator``, ``rule_params``;
    the seed's for an entry with none). O(1).

    Raises:
        ValueError: an unknown filter, or a rule constant no ``AllocRule`` field names.
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
    return AllocRule(
        admission=admission,
        door_capacity=params.get("door_capacity"),
        allocator=str(entry.get("allocator") or DEFAULT_ALLOCATOR),
        contiguity=params.get("contiguity", 0),
    )


def rule_of_cache(cache: EmbeddingCache) -> AllocRule:
    """The alloc rule ``cache`` runs, its filter's capacity read off the filter. O(1).

    The doorkeeper and contiguity at once are checked against tla/combined/'s
    composition (spec/SPEC.md section 14.1).

    Raises:
        ValueError: a filter other than the doorkeeper (the trace spec knows its rule
            only).
    """
    door = state_of(cache).admission
    if door is None:
        return AllocRule(allocator=cache.allocator, contiguity=cache.contiguity)
    if not isinstance(door, Doorkeeper):
        raise ValueError(f"trace validation knows the doorkeeper's rule only, not {door.name!r}")
    return AllocRule(door.name, door.capacity, cache.allocator, cache.contiguity)


def check_rule(rule: AllocRule, constants: Mapping[str, object]) -> str | None:
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
