"""Eviction policies: the swappable part of the cache (spec/POLICIES.md).

``EVICTION_POLICIES`` maps each name ``EmbeddingCache(..., eviction=NAME)``
accepts to its class; ``make_policy`` builds one for a pool.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .base import EvictionPolicy, Hooks, SizeOf, VictimPlan
from .fifo import FifoPolicy
from .gdsf import GdsfPolicy
from .s3fifo import S3FifoPolicy

#: Every policy by the name the cache takes; "fifo" (the seed's) is the default.
EVICTION_POLICIES: dict[str, type[EvictionPolicy]] = {
    FifoPolicy.name: FifoPolicy,
    GdsfPolicy.name: GdsfPolicy,
    S3FifoPolicy.name: S3FifoPolicy,
}

#: What ``eviction=`` accepts: a name, or a callable taking ``num_blocks`` (e.g. a
#: policy class, or ``functools.partial(GdsfPolicy, scale=4)``).
PolicySpec = str | Callable[[int], EvictionPolicy]


def make_policy(eviction: object, num_blocks: int) -> EvictionPolicy:
    """A fresh policy for a pool of ``num_blocks`` blocks.

    Raises:
        ValueError: ``eviction`` is a name that is not in ``EVICTION_POLICIES``.
        TypeError: ``eviction`` is neither a name nor a callable returning a policy.
    """
    if isinstance(eviction, str):
        cls = EVICTION_POLICIES.get(eviction)
        if cls is None:
            valid = ", ".join(repr(n) for n in EVICTION_POLICIES)
            raise ValueError(
                f"EmbeddingCache: unknown eviction policy {eviction!r}; valid: {valid}"
            )
        return cls(num_blocks)
    if callable(eviction):
        policy: Any = eviction(num_blocks)
        if isinstance(policy, EvictionPolicy):
            return policy
        got = type(policy).__name__
        raise TypeError(f"EmbeddingCache: eviction factory returned {got}, not an EvictionPolicy")
    kind = type(eviction).__name__
    raise TypeError(f"EmbeddingCache: eviction must be a policy name or a factory, not {kind}")


__all__ = [
    "EVICTION_POLICIES",
    "EvictionPolicy",
    "FifoPolicy",
    "GdsfPolicy",
    "Hooks",
    "PolicySpec",
    "S3FifoPolicy",
    "SizeOf",
    "VictimPlan",
    "make_policy",
]
