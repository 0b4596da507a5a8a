"""The implementations the bench measures: the seed, and the package's, from its registries.

Every policy the bench measures comes from ``embedding_cache.EVICTION_POLICIES``
(``policy_names``, ``cache_factory``) and every allocator from
``embedding_cache.ALLOCATORS`` (``allocator_names``); ``BASELINE`` is the policy
ratios are taken against. For ``bench --beyond-seed``, an implementation is a
name and a factory ``num_blocks -> fresh cache`` (``factories``):

- ``"seed"``: the seed's own class, vLLM's ``EmbeddingCache`` from the installed
  ``vllm==0.33.0`` (``embedding_cache_checker.upstream``, loaded on first use), with a
  length and a pool size added for the drivers;
- ``"<policy>"``: ``EmbeddingCache(n, eviction=policy)`` of the running build,
  with the default allocator (``embedding_cache.DEFAULT_ALLOCATOR``);
- ``"<policy>/<allocator>"``: the same with another allocator from
  ``embedding_cache.ALLOCATORS``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Protocol, cast

from embedding_cache import (
    ADMISSION_FILTERS,
    ALLOCATORS,
    DEFAULT_ALLOCATOR,
    EVICTION_POLICIES,
    EmbeddingCache,
)
from embedding_cache.policies import FifoPolicy
from embedding_cache_checker import upstream

from . import workload

#: The name the seed's class is reported under.
SEED = "seed"

#: Policy every ratio is taken against: the seed's own order (its drop-in), whatever
#: else the registry holds. The report's ``*_vs_fifo`` keys keep that name.
BASELINE = FifoPolicy.name

#: A function ``num_blocks -> fresh cache``.
Factory = Callable[[int], workload.Cache]
#: Maps a policy name to its cache factory (tests plant their own).
FactoryFor = Callable[[str], Factory]


def policy_names() -> tuple[str, ...]:
    """Every name in ``embedding_cache.EVICTION_POLICIES``, in its order. O(policies)."""
    return tuple(EVICTION_POLICIES)


#: Between a policy and an admission filter in a configuration's name: "gdsf+doorkeeper".
ADMISSION_SEPARATOR = "+"


def configuration_names() -> tuple[str, ...]:
    """Every policy (``policy_names``), then every policy with every admission filter of
    ``embedding_cache.ADMISSION_FILTERS``, as "<policy>+<filter>". O(policies x filters)."""
    policies = policy_names()
    with_filters = tuple(
        f"{policy}{ADMISSION_SEPARATOR}{door}" for door in ADMISSION_FILTERS for policy in policies
    )
    return policies + with_filters


def cache_factory(name: str) -> Factory:
    """A function ``num_blocks -> fresh EmbeddingCache`` for configuration ``name``: a
    policy of ``EVICTION_POLICIES``, or "<policy>+<filter>" with an admission filter of
    ``ADMISSION_FILTERS``. O(1).

    Raises:
        ValueError: the policy or the filter is unknown.
    """
    policy, _, door = name.partition(ADMISSION_SEPARATOR)
    if policy not in EVICTION_POLICIES:
        raise ValueError(
            f"unknown eviction policy {policy!r}; choose from {', '.join(EVICTION_POLICIES)}"
        )
    if not door:
        return functools.partial(EmbeddingCache, eviction=policy)
    if door not in ADMISSION_FILTERS:
        raise ValueError(
            f"unknown admission filter {door!r}; choose from {', '.join(ADMISSION_FILTERS)}"
        )
    return functools.partial(EmbeddingCache, eviction=policy, admission=door)


class SeedCache(upstream.UpstreamCache, Protocol):
    """The seed's class (``seed_class``): vLLM's, plus the two read-only queries the
    bench's drivers use."""

    @property
    def num_blocks(self) -> int: ...
    def __len__(self) -> int: ...


class _SeedQueries:
    """``__len__`` (live entries) and ``num_blocks`` (pool size), read from the seed's
    own fields; mixed after vLLM's class, so every operation stays the seed's."""

    _num_blocks: int
    _entries: dict[str, upstream.UpstreamEntry]

    @property
    def num_blocks(self) -> int:
        """Size of the block pool. O(1)."""
        return int(self._num_blocks)

    def __len__(self) -> int:
        """Number of live entries. O(1)."""
        return len(self._entries)


@functools.cache
def seed_class() -> type[SeedCache]:
    """vLLM's ``EmbeddingCache`` with ``_SeedQueries`` mixed in, built once, on first use.

    Every operation is vLLM's, inherited unchanged, so timings, contiguity and memory
    are the seed's.

    Raises:
        upstream.UpstreamUnavailableError: vllm==0.33.0 is not installed (the message
            names the install command).
    """
    base = upstream.embedding_cache_class()
    made = type("SeedCache", (base, _SeedQueries), {"__module__": __name__})
    return cast("type[SeedCache]", made)


def seed_cache(num_blocks: int) -> workload.Cache:
    """A fresh cache of the seed's class (``seed_class``). Its entries are vLLM's own
    ``CacheEntry`` (same attributes, another class), hence the cast to ``Cache``.

    Raises:
        upstream.UpstreamUnavailableError: as ``seed_class``.
    """
    return cast(workload.Cache, seed_class()(num_blocks))


#: The seed's class as a factory (loads vLLM's class on its first call, not before).
SEED_FACTORY: Factory = seed_cache


def name(policy: str, allocator: str = DEFAULT_ALLOCATOR, contiguity: int = 0) -> str:
    """The implementation's name: the policy, plus ``/allocator`` unless it is the default,
    plus ``/k<contiguity>`` when contiguity is on: "gdsf/extents/k4"."""
    base = policy if allocator == DEFAULT_ALLOCATOR else f"{policy}/{allocator}"
    return f"{base}/k{contiguity}" if contiguity else base


def allocator_names() -> tuple[str, ...]:
    """Every name in ``embedding_cache.ALLOCATORS``, the default first."""
    return (DEFAULT_ALLOCATOR, *(kind for kind in ALLOCATORS if kind != DEFAULT_ALLOCATOR))


def factories(
    names: Sequence[str] | None = None,
    *,
    allocators: Sequence[str] | None = None,
    with_seed: bool = True,
    contiguity: Sequence[int] = (),
) -> dict[str, Factory]:
    """``{"seed": ..., "<policy>": ..., "<policy>/<allocator>": ...}``: the seed first, then per
    policy in ``names`` (default: every policy in ``EVICTION_POLICIES``) each allocator in
    ``allocators`` (default: every one in ``ALLOCATORS``, the default first), then
    ``"<policy>/extents/k<k>"`` for each bound in ``contiguity``.

    O(policies x allocators).

    Raises:
        ValueError: a name is not in ``EVICTION_POLICIES``, or not in ``ALLOCATORS``.
        upstream.UpstreamUnavailableError: ``with_seed`` and vllm==0.33.0 is not installed.
    """
    chosen = policy_names() if names is None else tuple(names)
    kinds = allocator_names() if allocators is None else tuple(allocators)
    unknown = [kind for kind in kinds if kind not in ALLOCATORS]
    if unknown:
        raise ValueError(f"unknown allocator(s) {unknown}; choose from {', '.join(ALLOCATORS)}")
    if with_seed:
        seed_class()  # vLLM's class is loaded now, never inside a timed or traced call
    out: dict[str, Factory] = {SEED: SEED_FACTORY} if with_seed else {}
    for policy in chosen:
        cache_factory(policy)  # raises ValueError for an unknown policy
        for kind in kinds:
            out[name(policy, kind)] = functools.partial(
                EmbeddingCache, eviction=policy, allocator=kind
            )
        for k in contiguity:  # contiguity-aware eviction: only on the extents allocator
            out[name(policy, CONTIGUOUS_ALLOCATOR, k)] = functools.partial(
                EmbeddingCache, eviction=policy, allocator=CONTIGUOUS_ALLOCATOR, contiguity=k
            )
    return out


#: The allocator contiguity-aware eviction runs on (``EmbeddingCache(contiguity=k)``).
CONTIGUOUS_ALLOCATOR = "extents"
