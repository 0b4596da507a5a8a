"""Planted bugs of fifo's order rule (oldest first): broken subclasses of FifoPolicy.

NEVER used by the cache. Each class overrides one method of the real policy
with one plausible mistake in its order rule (``planted.bug.PlantedPolicy``
says why no class adds a field); ``BUGS`` holds their catalogue entries.

The same file holds ``ADAPTER``, how CrossHair builds this policy's states
(``embedding_cache_checker.policies.adapter``): a policy's checker side is one
file. fifo's checker side: its CrossHair state is only which keys it queues, in key order.

Relabelling keys maps any queue order onto key order (``k0``, ``k1``, ...), so
the builder needs no choices.
"""

from __future__ import annotations

from collections.abc import Sequence

from embedding_cache.policies import EvictionPolicy, FifoPolicy, Hooks

from ...policies.base import Entries, PolicyAdapter
from .bug import ORDER, READY_ABC, PlantedBug, PlantedPolicy, policy_bug


class FifoEvictNewest(PlantedPolicy, FifoPolicy):
    """PLANTED BUG (EvictNewest): ``evict`` pops the queue's tail (the newest), not its head."""

    __slots__ = ()

    def evict(self) -> str:
        """O(1)."""
        return self.queue.popitem(last=True)[0]  # the bug: last=False

    def hooks(self) -> Hooks:
        """The Python-level hooks (FifoPolicy's C-level ones would bypass the override)."""
        return EvictionPolicy.hooks(self)


class FifoInsertAtHead(PlantedPolicy, FifoPolicy):
    """PLANTED BUG (FifoInsertAtHead): ``ready`` and ``release`` put the key at the queue's
    head, so the newest evictable entry is evicted first (tla/: the fifo bug model)."""

    __slots__ = ()

    def ready(self, key: str, size: int) -> None:
        """O(1)."""
        self.queue[key] = size
        self.queue.move_to_end(key, last=False)  # the bug: the head, not the tail

    def release(self, key: str, size: int) -> None:
        """O(1)."""
        self.ready(key, size)

    def hooks(self) -> Hooks:
        """The Python-level hooks (FifoPolicy's C-level ones would bypass the override)."""
        return EvictionPolicy.hooks(self)


#: The fifo policy's planted bugs (catalogue entries).
BUGS: tuple[PlantedBug, ...] = (
    policy_bug(
        "EvictNewest", FifoEvictNewest,
        (ORDER,), (*READY_ABC, ("alloc", "d", 1)), "MCBugEvictNewest",
    ),
    policy_bug(
        "FifoHeadInsert", FifoInsertAtHead,
        (ORDER,),
        (("alloc", "a", 1), ("mark_ready", "a"), ("alloc", "b", 1), ("mark_ready", "b")),
        "MCBugFifoHeadInsert",
    ),
)  # fmt: skip


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
