"""CacheState: the plain state the transitions act on.

Ints, a list, a dict, and the eviction policy that owns the order of the
evictable entries; no lock. The thread-safe ``EmbeddingCache`` owns one and
hands it to the functions in ``transitions`` with its lock held; CrossHair
and the conformance checks build states directly.
"""

from __future__ import annotations

from .entry import CacheEntry
from .policies import EvictionPolicy, FifoPolicy, Hooks


class CacheState:
    """The cache's whole state (see spec/SPEC.md for the mapping to the TLA+ variables)."""

    __slots__ = ("entries", "evictable_blocks", "free", "hooks", "num_blocks", "policy")

    def __init__(self, num_blocks: int, policy: EvictionPolicy | None = None) -> None:
        #: Size of the block pool; block ids are 0 .. num_blocks-1.  (TLA+: N)
        self.num_blocks: int = num_blocks
        #: Free block ids, used as a LIFO stack.  (TLA+: free)
        self.free: list[int] = list(range(num_blocks))
        #: Key -> live entry in any state.  (TLA+: entries)
        self.entries: dict[str, CacheEntry] = {}
        #: Total blocks of the evictable (ready+unpinned) entries, for fail-fast.  (TLA+: evictable)
        self.evictable_blocks: int = 0
        #: The eviction policy: the order of the evictable entries and the victim rule.
        self.policy: EvictionPolicy = FifoPolicy(num_blocks) if policy is None else policy
        #: Its hooks, bound once so that each transition pays one call.
        self.hooks: Hooks = self.policy.hooks()

    def set_policy(self, policy: EvictionPolicy) -> None:
        """Install ``policy`` (which must already hold exactly the evictable keys). O(1)."""
        self.policy = policy
        self.hooks = policy.hooks()

    def __repr__(self) -> str:
        return (
            f"CacheState(num_blocks={self.num_blocks}, free={self.free!r}, "
            f"entries={self.entries!r}, policy={self.policy.name}:{self.policy.abstract()!r}, "
            f"evictable_blocks={self.evictable_blocks})"
        )
