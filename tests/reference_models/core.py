"""The policy-agnostic cache model: entries, the free count, and every misuse verdict.

A dict key -> ModelEntry(pins, n_blocks) and an int free count, written from
spec/SPEC.md; the evictable set E is recomputed from the entries on every
use, never kept. The eviction order is the policy model's: the model calls
its hooks on exactly the events spec/POLICIES.md names.

The spec leaves open which free blocks an alloc takes, so the model does not
choose them: the caller records the ids the cache returned (``blocks``).
Every operation first decides whether the call is misuse and raises
``ExpectedError`` before changing anything, as the cache must.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from embedding_cache import (
    AlreadyReadyError,
    CapacityError,
    DiscardHeldError,
    DuplicateAllocError,
    ForeignLeaseError,
    NotPinnedError,
    NotReadyError,
    UnknownKeyError,
)

from .base import PolicyModel


@dataclass
class ModelEntry:
    """One live entry: pins -1 = not-ready, 0 = ready (evictable), k > 0 = pinned k times."""

    pins: int
    n_blocks: int
    blocks: tuple[int, ...] = ()  # recorded from the cache, never chosen by the model

    def state(self) -> str:
        """The lifecycle state as the cache's errors name it."""
        if self.pins < 0:
            return "not-ready"
        return "ready" if self.pins == 0 else f"pinned({self.pins})"


class ExpectedError(Exception):
    """The model's verdict that a call must raise ``error``, naming ``state``."""

    def __init__(self, error: type[Exception], state: str = "") -> None:
        super().__init__(error.__name__, state)
        self.error = error
        self.state = state


class Model:
    """The spec, as plainly as possible: no counters kept, everything recomputed.

    Each operation is O(entries) or O(entries * victims); the pools are tiny.
    """

    def __init__(
        self,
        num_blocks: int,
        policy: PolicyModel,
        door_capacity: int | None = None,
        contiguity: int = 0,
    ) -> None:
        self.num_blocks = num_blocks
        self.free = num_blocks
        self.entries: dict[str, ModelEntry] = {}
        self.policy = policy
        #: The doorkeeper's door (spec/SPEC.md section 13), oldest first, when the cache
        #: runs with one (``door_capacity`` keys); None for the seed's rule.
        self.door: list[str] | None = None if door_capacity is None else []
        self.door_capacity = door_capacity or 0
        #: The contiguity bound k (section 14); 0 is the seed's rule.
        self.contiguity = contiguity
        #: The clock (the test moves it) and the live leases: id -> (key, deadline).
        self.now = 0.0
        self.leases: dict[int, tuple[str, float]] = {}
        #: Every lease id the cache handed out, held or not (ids count from 0).
        self.granted = 0

    def evictable(self) -> int:
        """blocks(E): the blocks of the ready, unpinned entries."""
        return sum(e.n_blocks for e in self.entries.values() if e.pins == 0)

    def keys_where(self, state: str) -> list[str]:
        """The live keys whose state starts with ``state``, sorted."""
        return sorted(k for k, e in self.entries.items() if e.state().startswith(state))

    def held(self) -> bool:
        """HasHeldEntries: some entry is not-ready or pinned."""
        return any(e.pins != 0 for e in self.entries.values())

    def _live(self, key: object) -> ModelEntry:
        if not isinstance(key, str):
            raise ExpectedError(TypeError)
        if key not in self.entries:
            raise ExpectedError(UnknownKeyError)
        return self.entries[key]

    def alloc(self, key: object, n: object) -> str | None:
        """Alloc / AllocFail, evicting the policy's victims until n blocks are free; with a
        door, AllocDecline too; with contiguity, up to k extra victims until a free run
        of n exists."""
        if not isinstance(key, str) or isinstance(n, bool) or not isinstance(n, int):
            raise ExpectedError(TypeError)
        if n < 0:
            raise ExpectedError(ValueError)
        if key in self.entries:
            raise ExpectedError(DuplicateAllocError, self.entries[key].state())
        if n > self.num_blocks:
            raise ExpectedError(CapacityError, "absent")
        if self.free + self.evictable() < n:
            return None
        door = self.door
        if door is not None:
            # AllocDecline: an alloc that would evict (it could: checked above) of a key
            # not at the door is declined, and the key joins the door. It would evict a
            # needed victim (fewer than n free) or, with contiguity, an extra one (no
            # free run of n while some entry is evictable; section 13.1).
            if self._evicts(n) and key not in door:
                door.append(key)
                if len(door) > self.door_capacity:
                    del door[0]  # the oldest leaves a full door
                return None
            if key in door:
                door.remove(key)  # admitted: off the door
        while self.free < n:
            self._evict()
        # Contiguity (section 14.1), phase 2: up to k extra victims, in the policy's
        # order, while no free run of n exists and some entry is evictable.
        for _ in range(self.contiguity):
            if self._has_run(n) or not any(e.pins == 0 for e in self.entries.values()):
                break
            self._evict()
        self.free -= n
        self.entries[key] = ModelEntry(pins=-1, n_blocks=n)
        self.policy.admit(key, n)
        return "entry"

    def _evicts(self, n: int) -> bool:
        """The alloc of n (not short) would evict an entry: a needed victim (fewer than n
        free) or, with contiguity, an extra one (no free run of n while an entry is
        evictable)."""
        return self.free < n or (
            self.contiguity > 0
            and any(e.pins == 0 for e in self.entries.values())
            and not self._has_run(n)
        )

    def _evict(self) -> None:
        """Evict: the policy model's next victim leaves; its blocks are free."""
        victim = self.policy.evict()
        assert self.entries[victim].pins == 0, f"model: the policy model evicted {victim!r}"
        self.free += self.entries.pop(victim).n_blocks

    def _has_run(self, n: int) -> bool:
        """HasRun(free, n): n consecutive free ids; true for n = 0."""
        return self.longest_run() >= n

    def longest_run(self) -> int:
        """The length of the longest run of consecutive free ids, the free ids being those
        no live entry holds (the ids the cache returned, as recorded)."""
        owned = {b for e in self.entries.values() for b in e.blocks}
        longest = length = 0
        for block in range(self.num_blocks):
            length = 0 if block in owned else length + 1
            longest = max(longest, length)
        return longest

    def mark_ready(self, key: object) -> None:
        """MarkReady: the entry joins E."""
        entry = self._live(key)
        if entry.pins != -1:
            raise ExpectedError(AlreadyReadyError, entry.state())
        entry.pins = 0
        self.policy.ready(str(key), entry.n_blocks)

    def _pin_step(self, key: str, entry: ModelEntry) -> None:
        """PinStep: the first pin takes the entry out of E (hold), every pin is a use (hit)."""
        if entry.pins == 0:
            self.policy.hold(key)
        entry.pins += 1
        self.policy.hit(key)

    def pin(self, key: object) -> None:
        """Pin of a ready entry (pins nest)."""
        entry = self._live(key)
        if entry.pins < 0:
            raise ExpectedError(NotReadyError, entry.state())
        self._pin_step(str(key), entry)

    def pin_if_ready(self, key: object) -> str | None:
        """PinIfReady: None when absent; a not-ready entry is returned unpinned."""
        if not isinstance(key, str):
            raise ExpectedError(TypeError)
        entry = self.entries.get(key)
        if entry is None:
            return None
        if entry.pins >= 0:
            self._pin_step(key, entry)
        return "entry"

    def unpin(self, key: object) -> None:
        """Unpin of a plain pin; the last pin puts the entry back in E (release)."""
        entry = self._live(key)
        if entry.pins <= self.leased(str(key)):  # no pin, or only leases' pins
            raise ExpectedError(NotPinnedError, entry.state())
        self._unpin_step(str(key), entry)

    def _unpin_step(self, key: str, entry: ModelEntry) -> None:
        entry.pins -= 1
        if entry.pins == 0:
            self.policy.release(key, entry.n_blocks)

    # -- leases (spec/SPEC.md section 12)

    def has_held_entries(self) -> bool:
        """The query: some entry is not-ready or pinned."""
        return self.held()

    def expire_leases(self) -> list[str]:
        """The explicit pass; the due leases were already expired as the call began."""
        return self.expire_due()

    def leased(self, key: str) -> int:
        """How many live leases hold a pin of ``key``."""
        return sum(1 for k, _ in self.leases.values() if k == key)

    def expire_due(self) -> list[str]:
        """Expire: every lease past its deadline, earliest deadline first (ties: oldest id)."""
        due = sorted(
            (deadline, i) for i, (_, deadline) in self.leases.items() if deadline < self.now
        )
        keys = []
        for _, i in due:
            key, _ = self.leases.pop(i)
            self._unpin_step(key, self.entries[key])
            keys.append(key)
        return keys

    @staticmethod
    def _seconds(seconds: object) -> float:
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise ExpectedError(TypeError)
        try:
            length = float(seconds)
        except OverflowError:  # an int too large for a float: not a finite time
            raise ExpectedError(ValueError) from None
        if math.isnan(length) or math.isinf(length) or length < 0:
            raise ExpectedError(ValueError)
        return length

    def lease(self, key: object, seconds: object) -> tuple[int, bool] | None:
        """Lease: None when absent; else (the new lease's id, whether it holds a pin):
        a not-ready entry's lease holds nothing."""
        if not isinstance(key, str):
            raise ExpectedError(TypeError)
        length = self._seconds(seconds)
        entry = self.entries.get(key)
        if entry is None:
            return None
        lease_id = self.granted
        self.granted += 1
        if entry.pins < 0:
            return lease_id, False
        self._pin_step(key, entry)
        self.leases[lease_id] = (key, self.now + length)
        return lease_id, True

    def release_lease(self, lease_id: object) -> bool:
        """Release: True iff the lease was live (its pin goes, as an unpin's)."""
        if not isinstance(lease_id, int):
            raise ExpectedError(TypeError if lease_id != "foreign" else ForeignLeaseError)
        if lease_id not in self.leases:
            return False
        key, _ = self.leases.pop(lease_id)
        self._unpin_step(key, self.entries[key])
        return True

    def renew_lease(self, lease_id: object, seconds: object) -> bool:
        """Renew: the deadline becomes now + seconds; False once the lease is not live."""
        if not isinstance(lease_id, int):
            raise ExpectedError(TypeError if lease_id != "foreign" else ForeignLeaseError)
        length = self._seconds(seconds)
        if lease_id not in self.leases:
            return False
        self.leases[lease_id] = (self.leases[lease_id][0], self.now + length)
        return True

    def discard(self, key: object) -> None:
        """Discard of a not-ready entry: its blocks go back to the pool."""
        entry = self._live(key)
        if entry.pins != -1:
            raise ExpectedError(DiscardHeldError, entry.state())
        del self.entries[str(key)]
        self.free += entry.n_blocks
        self.policy.forget(str(key))

    def get(self, key: object) -> str | None:
        """get: a query, not a use."""
        if not isinstance(key, str):
            raise ExpectedError(TypeError)
        return "entry" if key in self.entries else None
