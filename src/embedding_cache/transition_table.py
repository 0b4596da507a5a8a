"""The table of transitions a cache calls: the one path tracing and planted bugs hook into.

It lists the core's transitions (``transitions``) and the lease transitions
(``lease_transitions``); it is its own module so that neither of those
imports the other's table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from . import lease_transitions
from .entry import CacheEntry
from .lease_transitions import LEASE_OPERATIONS
from .leases import Lease, LeaseOwner
from .state import CacheState, has_held_entries
from .transitions import OPERATIONS, get


class Transitions:
    """The functions ``EmbeddingCache`` calls under its lock, one per public method.

    The cache reaches the transitions only through one of these tables (its
    ``_ops``), so instrumentation -- tracing, a planted bug -- replaces the
    table and still runs inside the cache's own locking. Attribute access on
    a slotted object costs what a module attribute does.
    """

    __slots__ = (*OPERATIONS, *LEASE_OPERATIONS, "get", "has_held_entries")

    alloc: Callable[[CacheState, str, int], CacheEntry | None]
    mark_ready: Callable[[CacheState, str], None]
    pin: Callable[[CacheState, str], None]
    pin_if_ready: Callable[[CacheState, str], CacheEntry | None]
    unpin: Callable[[CacheState, str], None]
    discard: Callable[[CacheState, str], None]
    get: Callable[[CacheState, str], CacheEntry | None]
    has_held_entries: Callable[[CacheState], bool]
    lease: Callable[[CacheState, str, float, float, LeaseOwner | None], Lease | None]
    renew_lease: Callable[[CacheState, Lease, float, float], bool]
    release_lease: Callable[[CacheState, Lease], bool]
    expire_leases: Callable[[CacheState, float], list[str]]

    def __init__(self, overrides: Mapping[str, Callable[..., Any]] | None = None) -> None:
        """The real transitions, with ``overrides`` (name -> function) swapped in."""
        chosen: dict[str, Callable[..., Any]] = {
            **OPERATIONS,
            **LEASE_OPERATIONS,
            "get": get,
            "has_held_entries": has_held_entries,
        }
        for name, func in (overrides or {}).items():
            if name not in chosen:
                raise ValueError(f"no transition named {name!r}; names: {sorted(chosen)}")
            chosen[name] = func
        for name, func in chosen.items():
            setattr(self, name, func)

    def as_mapping(self) -> dict[str, Callable[..., Any]]:
        """name -> function, for every transition in the table."""
        return {name: getattr(self, name) for name in self.__slots__}


#: The table every EmbeddingCache uses unless told otherwise.
REAL = Transitions()

__all__ = ["REAL", "Transitions", "lease_transitions"]
