"""fifo's checker side: its CrossHair state is only which keys it queues, in key order.

Relabelling keys maps any queue order onto key order (``k0``, ``k1``, ...), so
the builder needs no choices.
"""

from __future__ import annotations

from collections.abc import Sequence

from embedding_cache.policies import EvictionPolicy, FifoPolicy

from .base import Entries, PolicyAdapter


def _build(policy: EvictionPolicy, entries: Entries, choices: Sequence[int]) -> None:
    """The evictable keys join in key order; no choices. O(entries)."""
    for key, size, pin in entries:
        if pin == 0:
            policy.ready(key, size)


def _listed(policy: EvictionPolicy) -> list[str]:
    """The queue, oldest first. O(entries)."""
    return list(policy.evictable_keys())


def _preimage(
    policy: EvictionPolicy, order: Sequence[str], sizes: Sequence[int]
) -> tuple[list[int], dict[str, str]]:
    """No choices, no keys of its own. O(1)."""
    return [], {}


ADAPTER = PolicyAdapter(
    name=FifoPolicy.name,
    factory=FifoPolicy,
    choice_bounds=(),
    build=_build,
    listed=_listed,
    preimage=_preimage,
)
