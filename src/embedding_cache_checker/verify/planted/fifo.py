"""Planted bugs of fifo's order rule (oldest first): broken subclasses of FifoPolicy.

NEVER used by the cache. Each class overrides one method of the real policy
with one plausible mistake in its order rule (``planted.bug.PlantedPolicy``
says why no class adds a field); ``BUGS`` holds their catalogue entries.
"""

from __future__ import annotations

from embedding_cache.policies import EvictionPolicy, FifoPolicy, Hooks

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
