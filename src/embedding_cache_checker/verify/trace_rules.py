"""The alloc rule a trace was recorded under, as trace validation checks it.

spec/SPEC.md sections 13 (admission) and 14 (contiguity) change what an alloc may
do; the trace spec (tla/trace/EmbeddingCacheTrace.tla) checks each alloc under the
trace's rule, set by three constants of tla/trace/TracePolicy.tla. ``TraceRule`` is
that rule, read off a cache by ``trace_rule``.
"""

from __future__ import annotations

from dataclasses import dataclass

from embedding_cache import Doorkeeper, EmbeddingCache
from embedding_cache.verification import state_of

__all__ = ["SEED_RULE", "TraceRule", "trace_rule"]


@dataclass(frozen=True)
class TraceRule:
    """The alloc rule a trace was recorded under (spec/SPEC.md sections 13 and 14), as
    the trace spec's constants: ``Contiguity``, ``Filtered`` and ``DoorCapacity``
    (tla/trace/TracePolicy.tla)."""

    contiguity: int = 0  # the cache's k; 0: evict only as needed
    door_capacity: int | None = None  # the doorkeeper's capacity; None: no filter

    def constants(self) -> dict[str, str]:
        """The trace config's lines for the rule, by constant. O(1)."""
        return {
            "Contiguity": str(self.contiguity),
            "Filtered": "FALSE" if self.door_capacity is None else "TRUE",
            "DoorCapacity": str(self.door_capacity or 1),  # ASSUMEd >= 1
        }


#: The seed's rule: no filter, no contiguity.
SEED_RULE = TraceRule()


def trace_rule(cache: EmbeddingCache) -> TraceRule:
    """The rule ``cache`` runs under, as trace validation checks it. O(1).

    The doorkeeper and contiguity at once are checked against tla/combined/'s
    composition (spec/SPEC.md section 14.1).

    Raises:
        ValueError: a filter other than the doorkeeper (the trace spec knows its rule
            only).
    """
    s = state_of(cache)
    door = s.admission
    if door is None:
        return TraceRule(s.contiguity)
    if not isinstance(door, Doorkeeper):
        raise ValueError(f"trace validation knows the doorkeeper's rule only, not {door.name!r}")
    return TraceRule(s.contiguity, door.capacity)
