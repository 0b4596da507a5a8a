"""CacheState: the plain state the transitions act on.

Ints, the free pool (the seed's stack, or coalesced extents), a dict, and
the eviction policy that owns the order of the evictable entries; no lock.
The thread-safe ``EmbeddingCache`` owns one and hands it to the functions
in ``transitions`` with its lock held; CrossHair and the conformance checks
build states directly.
"""

from __future__ import annotations

from typing import Any

from .admission import AdmissionFilter
from .allocators import DEFAULT_ALLOCATOR, make_free_pool
from .entry import CacheEntry
from .free_pool import FreePool
from .leases import LeaseBook
from .policies import EvictionPolicy, FifoPolicy, Hooks, PolicyChecks


class CacheState:
    """The cache's whole state (see spec/SPEC.md for the mapping to the TLA+ variables)."""

    __slots__ = (
        "admission",
        "checks",
        "contiguity",
        "entries",
        "evictable_blocks",
        "evictable_count",
        "free",
        "hooks",
        "leases",
        "num_blocks",
        "on_admit",
        "on_evict",
        "on_forget",
        "on_hit",
        "on_hold",
        "on_ready",
        "on_release",
        "policy",
    )

    def __init__(
        self,
        num_blocks: int,
        policy: EvictionPolicy | None = None,
        allocator: str = DEFAULT_ALLOCATOR,
        admission: AdmissionFilter | None = None,
        contiguity: int = 0,
    ) -> None:
        #: Size of the block pool; block ids are 0 .. num_blocks-1.  (TLA+: N)
        self.num_blocks: int = num_blocks
        #: Free block ids: the seed's LIFO stack, or coalesced extents
        #: (``allocators``; the spec lets an alloc take any free ids).  (TLA+: free)
        self.free: FreePool = make_free_pool(allocator, num_blocks)
        #: Key -> live entry in any state.  (TLA+: entries)
        self.entries: dict[str, CacheEntry] = {}
        #: Total blocks of the evictable (ready+unpinned) entries, for fail-fast.  (TLA+: evictable)
        self.evictable_blocks: int = 0
        #: The live pin leases, their deadlines and their count per key (``leases``).
        self.leases: LeaseBook = LeaseBook()
        #: The eviction policy: the order of the evictable entries and the victim rule.
        self.policy: EvictionPolicy = FifoPolicy(num_blocks) if policy is None else policy
        self.set_policy(self.policy)
        #: The admission filter (``admission``), or None: the seed's rule.  (TLA+: door)
        self.admission: AdmissionFilter | None = admission
        #: How many victims beyond need an alloc may evict while no free run
        #: holds its blocks (spec/SPEC.md section 14); 0: the seed's rule.  (TLA+: Contiguity)
        self.contiguity: int = contiguity

    def set_policy(self, policy: EvictionPolicy) -> None:
        """Install ``policy`` (which must already hold exactly the evictable keys). O(1).

        Its hooks are bound once, here, and also kept one by one in slots of
        their own: a transition then pays one attribute load and one call
        (for fifo a C-level one), which keeps the default policy as fast as
        the seed's inline OrderedDict.
        """
        self.policy = policy
        #: The policy's verification adapter (contracts, the sweep and the checker read it).
        self.checks: PolicyChecks[Any] = policy.checks()
        hooks = policy.hooks()
        #: The policy's bound hooks (``policies.base.Hooks``).
        self.hooks: Hooks = hooks
        self.on_ready = hooks.ready
        self.on_release = hooks.release
        self.on_hold = hooks.hold
        self.on_hit = hooks.hit
        self.on_admit = hooks.admit
        self.on_forget = hooks.forget
        self.on_evict = hooks.evict
        #: How many keys the policy holds as evictable. O(1).
        self.evictable_count = hooks.evictable_count

    def copy(self) -> CacheState:
        """An independent deep copy (entries and policy too), hooks bound to the copy.

        O(N + entries). Replay and the linearizability model branch states with it.
        """
        twin = CacheState.__new__(CacheState)
        twin.num_blocks = self.num_blocks
        twin.free = self.free.copy()
        twin.entries = {}
        for key, entry in self.entries.items():
            clone = CacheEntry(entry.block_ids, entry.shape)
            clone._pin_count = entry._pin_count
            twin.entries[key] = clone
        twin.evictable_blocks = self.evictable_blocks
        # The copy's lease handles belong to no cache: a checker drives them by id.
        twin.leases = self.leases.copy()
        policy = self.checks.clone()
        if type(policy) is not type(self.policy):
            # A subclass that inherits its parent's clone (a planted bug) adds no
            # field: give the copy its class back.
            policy.__class__ = type(self.policy)
        twin.set_policy(policy)
        door = self.admission
        twin.admission = None
        if door is not None:
            twin.admission = door.copy()
            if type(twin.admission) is not type(door):
                # A filter subclass that inherits its parent's copy (a planted bug) adds
                # no field: give the copy its class back, as the policy's above.
                twin.admission.__class__ = type(door)
        twin.contiguity = self.contiguity
        return twin

    def __deepcopy__(self, memo: dict[int, object]) -> CacheState:
        """``copy.deepcopy`` must rebind the hooks to the copy's policy (see ``copy``)."""
        twin = self.copy()
        memo[id(self)] = twin
        return twin

    def __repr__(self) -> str:
        return (
            f"CacheState(num_blocks={self.num_blocks}, free={self.free!r}, "
            f"entries={self.entries!r}, policy={self.policy.name}:{self.checks.abstract()!r}, "
            f"evictable_blocks={self.evictable_blocks}"
            + (f", admission={self.admission!r}" if self.admission is not None else "")
            + (f", contiguity={self.contiguity}" if self.contiguity else "")
            + (f", leases={self.leases!r})" if self.leases.live else ")")
        )


def has_held_entries(s: CacheState) -> bool:
    """True iff some entry is not-ready or pinned (HeldEntriesInv). O(1).

    Held entries are exactly the live ones the policy does not hold as
    evictable (EvictableSetInv). It lives here, beside the state, because the
    transitions, the invariants and the contracts all read it (here it makes
    no import cycle).
    """
    return len(s.entries) != s.evictable_count()
