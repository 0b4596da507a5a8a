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

from dataclasses import dataclass

from embedding_cache import (
    AlreadyReadyError,
    CapacityError,
    DiscardHeldError,
    DuplicateAllocError,
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

    def __init__(self, num_blocks: int, policy: PolicyModel) -> None:
        self.num_blocks = num_blocks
        self.free = num_blocks
        self.entries: dict[str, ModelEntry] = {}
        self.policy = policy

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
        """Alloc / AllocFail, evicting the policy's victims until n blocks are free."""
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
        while self.free < n:
            victim = self.policy.evict()
            assert self.entries[victim].pins == 0, f"model: the policy model evicted {victim!r}"
            self.free += self.entries.pop(victim).n_blocks
        self.free -= n
        self.entries[key] = ModelEntry(pins=-1, n_blocks=n)
        self.policy.admit(key, n)
        return "entry"

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
        """Unpin; the last one puts the entry back in E (release)."""
        entry = self._live(key)
        if entry.pins <= 0:
            raise ExpectedError(NotPinnedError, entry.state())
        entry.pins -= 1
        if entry.pins == 0:
            self.policy.release(str(key), entry.n_blocks)

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
