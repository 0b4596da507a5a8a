"""Copies of EmbeddingCache with the lock removed from one public method (test-only).

``without_lock(method)`` takes the real method's source from ``cache.py``,
drops its ``with self._lock:`` line and dedents the block under it, and
returns a subclass whose ``method`` is that copy: the cache exactly as
written, minus one critical section. Built from the source, the copies
follow ``cache.py`` as it changes. The mutants that break atomicity in other
ways (an operation split across two acquisitions, a read-then-write with a
window) are in ``embedding_cache_checker.verify.lin.mutants``.
"""

from __future__ import annotations

import inspect
import textwrap
from typing import Any

from embedding_cache import cache as cache_module
from embedding_cache.cache import EmbeddingCache

#: Every public method that takes the lock (``__len__`` is ``len(cache)``).
PUBLIC: tuple[str, ...] = (
    "get",
    "has_held_entries",
    "alloc",
    "mark_ready",
    "pin",
    "pin_if_ready",
    "unpin",
    "discard",
    "check",
    "__len__",
    "lease",
    "renew_lease",
    "release_lease",
    "expire_leases",
)

LOCK_LINE = "with self._lock:"


def unlocked_source(method: str) -> str:
    """The source of ``EmbeddingCache.<method>`` without its ``with self._lock:``.

    Raises:
        ValueError: the method does not have exactly one ``with self._lock:``.
    """
    lines = textwrap.dedent(inspect.getsource(getattr(EmbeddingCache, method))).splitlines()
    at = [i for i, line in enumerate(lines) if line.strip() == LOCK_LINE]
    if len(at) != 1:
        raise ValueError(f"EmbeddingCache.{method} has {len(at)} `{LOCK_LINE}` lines, not 1")
    i = at[0]
    indent = len(lines[i]) - len(lines[i].lstrip())
    out = lines[:i]
    for j in range(i + 1, len(lines)):
        line = lines[j]
        inside = not line.strip() or len(line) - len(line.lstrip()) > indent
        if not inside:
            out += lines[j:]
            break
        out.append(line[4:] if line.strip() else line)
    return "\n".join(out) + "\n"


def without_lock(method: str) -> type[EmbeddingCache]:
    """A subclass of EmbeddingCache whose ``method`` runs without the lock."""
    namespace: dict[str, Any] = dict(vars(cache_module))
    code = compile(unlocked_source(method), f"<EmbeddingCache.{method} without its lock>", "exec")
    exec(code, namespace)
    body = namespace[method]
    body.__qualname__ = f"Unlocked_{method}.{method}"
    return type(f"Unlocked_{method.strip('_')}", (EmbeddingCache,), {"__slots__": (), method: body})


#: One unlocked copy per public method.
UNLOCKED: dict[str, type[EmbeddingCache]] = {method: without_lock(method) for method in PUBLIC}
