"""Each eviction policy's checker-side adapter, found from the runtime registry.

For every name in ``embedding_cache.EVICTION_POLICIES`` the module
``embedding_cache_checker.policies.<name>`` defines ``ADAPTER``, a
``PolicyAdapter`` (``base``). Nothing here lists the policies: adding one to the
registry adds one module here, and every user (the CrossHair plugin, its tests)
finds it through ``adapter(name)``.
"""

from __future__ import annotations

import importlib
from functools import cache

from embedding_cache import EVICTION_POLICIES

from .base import PolicyAdapter

__all__ = ["PolicyAdapter", "adapter", "adapters"]


@cache
def adapter(name: str) -> PolicyAdapter:
    """The adapter of the registered policy ``name``. O(1) after its first import.

    Raises:
        KeyError: ``name`` is not in ``EVICTION_POLICIES``.
        LookupError: it is, but ``embedding_cache_checker.policies.<name>`` does not
            exist or defines no ``ADAPTER`` of that name (the message says which).
    """
    if name not in EVICTION_POLICIES:
        raise KeyError(f"unknown policy {name!r}; registered: {sorted(EVICTION_POLICIES)}")
    module_name = f"{__name__}.{name}"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:  # the adapter exists but imports something missing
            raise
        raise LookupError(
            f"policy {name!r} is registered but has no checker adapter: "
            f"write {module_name} (src/embedding_cache_checker/policies/{name}.py) "
            "defining ADAPTER = PolicyAdapter(...)"
        ) from None
    found = getattr(module, "ADAPTER", None)
    if not isinstance(found, PolicyAdapter) or found.name != name:
        raise LookupError(f"{module_name} must define ADAPTER = PolicyAdapter(name={name!r}, ...)")
    return found


def adapters() -> dict[str, PolicyAdapter]:
    """Every registered policy's adapter, in registry order. O(policies)."""
    return {name: adapter(name) for name in EVICTION_POLICIES}
