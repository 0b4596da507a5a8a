"""CacheEntry: one live entry of the cache, as the seed defines it."""

from __future__ import annotations

#: ``_pin_count`` of an entry whose save is still in flight.
NOT_READY = -1


class CacheEntry:
    """A single cache entry. Read ``.block_ids``, ``.shape`` and ``.ready`` freely;
    mutations only through EmbeddingCache methods.

    ``shape`` is the encoder output the blocks hold, ``(rows, width)``, or None:
    payload the cache keeps so that a load can restore the output (vLLM 0.33's
    ``CacheEntry.shape``). No transition reads it (spec/SPEC.md section 4.1).
    """

    __slots__ = ("_pin_count", "block_ids", "shape")

    def __init__(self, block_ids: tuple[int, ...], shape: tuple[int, int] | None = None) -> None:
        self.block_ids = block_ids
        #: (rows, width) of the encoder output the blocks hold, or None (not given).
        self.shape = shape
        # -1: not ready; 0: ready and evictable; k > 0: ready and pinned k times.
        self._pin_count = NOT_READY

    @property
    def ready(self) -> bool:
        """True once the entry's data is CPU-visible (marked ready). O(1)."""
        return self._pin_count >= 0

    @property
    def evictable(self) -> bool:
        """True when the entry is ready and unpinned. O(1)."""
        return self._pin_count == 0

    @property
    def pin_count(self) -> int:
        """-1 when not ready, else the number of outstanding pins. O(1)."""
        return self._pin_count

    def mark_ready(self) -> None:
        """Seed compatibility: set the entry ready and unpinned. O(1).

        Calling this directly bypasses the cache's bookkeeping; the cache never does.
        """
        self._pin_count = 0

    def pin(self) -> None:
        """Seed compatibility: add one pin. O(1). The cache never calls it directly."""
        self._pin_count += 1

    def state_name(self) -> str:
        """The lifecycle state as errors and the spec name it. O(1)."""
        if self._pin_count < 0:
            return "not-ready"
        if self._pin_count == 0:
            return "ready"
        return f"pinned({self._pin_count})"

    def __repr__(self) -> str:
        # The shape only when there is one: an entry without keeps the repr it always had.
        shape = "" if self.shape is None else f", shape={self.shape!r}"
        return f"CacheEntry(block_ids={self.block_ids!r}{shape}, state={self.state_name()!r})"
