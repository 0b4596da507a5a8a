"""Eviction policies: the swappable part of the cache (spec/POLICIES.md).

``EVICTION_POLICIES`` maps each name ``EmbeddingCache(..., eviction=NAME)``
accepts to its class; ``make_policy`` builds one for a pool.

The registry is found, not listed: every module of this package (but
``base``) that defines a concrete ``EvictionPolicy`` subclass with a ``name``
adds it, so a new policy is one new module here and no edit anywhere else in
the runtime (its other files: spec/POLICIES.md section 4).
Everything else that needs every policy (the checker, the tests, the bench)
iterates this registry.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from typing import Any

from .base import EvictionPolicy, Hooks, MoreVictims, PolicyChecks, SizeOf, VictimPlan
from .fifo import FifoPolicy
from .gdsf import GdsfPolicy
from .s3fifo import S3FifoPolicy
from .sieve import SievePolicy

#: The policy a cache uses unless told otherwise: the seed's.
DEFAULT_POLICY = FifoPolicy.name


def _discover() -> dict[str, type[EvictionPolicy]]:
    """Every policy class defined in a module of this package, by its name: the
    default first, then by module name. O(modules); runs once, at import.

    Raises:
        RuntimeError: two classes claim one name (a registry must be a function).
    """
    found: dict[str, type[EvictionPolicy]] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for cls in vars(module).values():
            if (
                inspect.isclass(cls)
                and issubclass(cls, EvictionPolicy)
                and cls.__module__ == module.__name__
                and not inspect.isabstract(cls)
            ):
                other = found.setdefault(cls.name, cls)
                if other is not cls:
                    raise RuntimeError(f"two eviction policies are named {cls.name!r}")
    default = found.pop(DEFAULT_POLICY)
    return {DEFAULT_POLICY: default, **found}


#: Every policy by the name the cache takes; "fifo" (the seed's) is the default, first.
EVICTION_POLICIES: dict[str, type[EvictionPolicy]] = _discover()

#: What ``eviction=`` accepts: a name, or a callable taking ``num_blocks`` (e.g. a
#: policy class, or ``functools.partial(GdsfPolicy, scale=4)``).
PolicySpec = str | Callable[[int], EvictionPolicy]


def make_policy(eviction: object, num_blocks: int) -> EvictionPolicy:
    """A fresh policy for a pool of ``num_blocks`` blocks.

    Raises:
        ValueError: ``eviction`` is a name that is not in ``EVICTION_POLICIES``.
        TypeError: ``eviction`` is neither a name nor a callable returning a policy.
    """
    if isinstance(eviction, str):
        cls = EVICTION_POLICIES.get(eviction)
        if cls is None:
            valid = ", ".join(repr(n) for n in EVICTION_POLICIES)
            raise ValueError(
                f"EmbeddingCache: unknown eviction policy {eviction!r}; valid: {valid}"
            )
        return cls(num_blocks)
    if callable(eviction):
        policy: Any = eviction(num_blocks)
        if isinstance(policy, EvictionPolicy):
            return policy
        got = type(policy).__name__
        raise TypeError(f"EmbeddingCache: eviction factory returned {got}, not an EvictionPolicy")
    kind = type(eviction).__name__
    raise TypeError(f"EmbeddingCache: eviction must be a policy name or a factory, not {kind}")


__all__ = [
    "DEFAULT_POLICY",
    "EVICTION_POLICIES",
    "EvictionPolicy",
    "FifoPolicy",
    "GdsfPolicy",
    "Hooks",
    "MoreVictims",
    "PolicyChecks",
    "PolicySpec",
    "S3FifoPolicy",
    "SievePolicy",
    "SizeOf",
    "VictimPlan",
    "make_policy",
]
