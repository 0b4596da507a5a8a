"""Each eviction policy's checker-side adapter, found from the runtime registry.
For every name in ``embedding_cache.EVICTION_POLICIES`` the policy's checker module
``embedding_cache_checker.verify.planted.<name>`` (its planted bugs, and this)
defines ``ADAPTER``, a ``PolicyAdapter`` (``base``). Nothing here lists the
policies: adding one to the registry adds its checker module, and every user (the
CrossHair plugin, its tests) finds it through ``adapter(name)``.
"""

from __future__ import annotations

from functools import cache

from embedding_cache import EVICTION_POLICIES

from ..policy_parts import policy_part
from .base import PolicyAdapter

__all__ = ["PolicyAdapter", "adapter", "adapters"]

#: The package of each policy's checker module (its planted bugs and its adapter).
CHECKER_MODULES = "embedding_cache_checker.verify.planted"


@cache
def adapter(name: str) -> PolicyAdapter:
    """The adapter of the registered policy ``name``. O(1) after its first import.

    Raises:
        KeyError: ``name`` is not in ``EVICTION_POLICIES``.
        LookupError: it is, but ``embedding_cache_checker.verify.planted.<name>`` does not
            exist or defines no ``ADAPTER`` of that name (the message says which).
    """
    if name not in EVICTION_POLICIES:
        raise KeyError(f"unknown policy {name!r}; registered: {sorted(EVICTION_POLICIES)}")
    found = policy_part(CHECKER_MODULES, name, "ADAPTER", "checker adapter (a PolicyAdapter)")
    if not isinstance(found, PolicyAdapter) or found.name != name:
        raise LookupError(
            f"{CHECKER_MODULES}.{name} must define ADAPTER = PolicyAdapter(name={name!r}, ...)"
        )
    return found


def adapters() -> dict[str, PolicyAdapter]:
    """Every registered policy's adapter, in registry order. O(policies)."""
    return {name: adapter(name) for name in EVICTION_POLICIES}
