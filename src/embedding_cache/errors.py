"""Typed errors. Every error is raised before the cache changes anything.

The families match the seed so that callers written against it keep working:
lifecycle misuse is an ``AssertionError`` (the seed used ``assert``), an absent
key a ``KeyError``; bad argument types and values are ``TypeError`` and
``ValueError``. Unlike the seed's asserts, these are raised in every build,
``python -O`` included.
"""

from __future__ import annotations


class CacheError(Exception):
    """Base of every error this package raises on purpose."""


class LifecycleError(CacheError, AssertionError):
    """An operation that the key's current lifecycle state does not allow.

    ``phrase`` is the seed's wording ("duplicate alloc", ...); ``key`` and
    ``state`` say which entry and in what state it was.
    """

    phrase = "lifecycle misuse"

    def __init__(self, key: str, state: str, detail: str = "") -> None:
        self.key = key
        self.state = state
        message = f"EmbeddingCache: {self.phrase} for key {key!r} (state: {state})"
        super().__init__(message + (f"; {detail}" if detail else ""))


class DuplicateAllocError(LifecycleError):
    """``alloc`` of a key that already has a live entry."""

    phrase = "duplicate alloc"


class CapacityError(LifecycleError):
    """``alloc`` of more blocks than the whole pool holds."""

    phrase = "capacity exceeded"


class AlreadyReadyError(LifecycleError):
    """``mark_ready`` of an entry that is already ready (or pinned)."""

    phrase = "mark_ready on already-ready entry"


class NotReadyError(LifecycleError):
    """``pin`` of an entry whose save has not completed."""

    phrase = "pin of not-ready entry"


class NotPinnedError(LifecycleError):
    """``unpin`` of an entry that holds no pin."""

    phrase = "unpin of unpinned entry"


class DiscardHeldError(LifecycleError):
    """``discard`` of an entry that is ready or pinned."""

    phrase = "discard of ready/pinned entry"


class ForeignLeaseError(CacheError, ValueError):
    """A lease handed to a cache that did not grant it."""

    def __init__(self, key: str, operation: str) -> None:
        self.key = key
        super().__init__(
            f"EmbeddingCache.{operation}: the lease on {key!r} was granted by another cache"
        )


class UnknownKeyError(CacheError, KeyError):
    """An operation that needs a live entry, on a key that has none."""

    def __init__(self, key: object, operation: str) -> None:
        self.key = key
        self.operation = operation
        super().__init__(key)

    def __str__(self) -> str:
        # KeyError's own __str__ shows only repr(key); say what was asked too.
        return f"EmbeddingCache: {self.operation} of absent key {self.key!r}"


class InvariantViolationError(CacheError, AssertionError):
    """A named invariant does not hold: a bug in the cache, never a caller's misuse."""

    def __init__(self, name: str, detail: str) -> None:
        self.name = name
        super().__init__(f"{name} violated: {detail}")
