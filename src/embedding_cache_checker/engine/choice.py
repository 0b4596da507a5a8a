"""Which cache runs inside vLLM's scheduler, and how it is put there.

- ``upstream``: vLLM's ``ECCPUScheduler`` with its own ``EmbeddingCache``, unchanged.
- ``project``: the same unchanged scheduler, with the project's ``EmbeddingCache``
  (any options) in place of upstream's: the name the scheduler module constructs,
  ``EmbeddingCache``, is patched for the construction only, so every line of the
  scheduler runs as shipped.
- ``plugin``: ``embedding_cache_vllm``'s ``VerifiedECCPUScheduler``, which holds the
  project's cache itself; its options reach it through
  ``ec_connector_extra_config["embedding_cache"]``, as from vLLM's command line.

``traced`` builds the project's cache as a ``TracedEmbeddingCache``: every cache
call is recorded (``tracing``), for trace validation of the protocol. ``planted``
names a planted bug of the plugin's scheduler (``planted``), for ``plugin`` only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from unittest import mock

from embedding_cache import EmbeddingCache
from embedding_cache_vllm.options import CacheOptions, parse_options

from ..tracing import TracedEmbeddingCache, TraceStep
from .stubs import SCHEDULER_MODULE, Settings, fake_region, vllm_config

if TYPE_CHECKING:
    from vllm.distributed.ec_transfer.ec_connector.cpu.scheduler import ECCPUScheduler

#: The choices, in report order.
KINDS = ("upstream", "project", "plugin")


@dataclass(frozen=True)
class CacheChoice:
    """A cache inside the scheduler; ``options`` as ``embedding_cache_vllm.options``
    reads them (``eviction``, ``allocator``, ``contiguity``, ``admission``,
    ``load_lease_seconds``), for ``project`` and ``plugin``."""

    kind: str = "upstream"
    options: tuple[tuple[str, Any], ...] = ()
    traced: bool = False
    planted: str = ""  # a planted bug of the plugin's scheduler (``planted.PLANTED``)

    def label(self) -> str:
        """``kind`` (with its planted bug) and its options, for reports."""
        opts = ",".join(f"{k}={v}" for k, v in self.options)
        kind = f"{self.kind}+{self.planted}" if self.planted else self.kind
        return f"{kind}({opts})" if opts else kind


@dataclass
class Built:
    """A scheduler ready to drive, and the trace its cache records (``traced`` only)."""

    scheduler: ECCPUScheduler
    trace: list[TraceStep] | None


def project_cache(
    options: CacheOptions, traced: bool, clock: Callable[[], float]
) -> Callable[[int], EmbeddingCache]:
    """A factory of the project's cache over ``num_blocks``, built from ``options``."""

    def make(num_blocks: int) -> EmbeddingCache:
        if traced:
            return TracedEmbeddingCache(
                num_blocks,
                options.eviction,
                options.allocator,
                clock,
                admission=options.admission,
                contiguity=options.contiguity,
            )
        return EmbeddingCache(
            num_blocks,
            eviction=options.eviction,
            allocator=options.allocator,
            clock=clock,
            admission=options.admission,
            contiguity=options.contiguity,
        )

    return make


def _trace_of(cache: object) -> list[TraceStep] | None:
    return cache.trace if isinstance(cache, TracedEmbeddingCache) else None


def build(choice: CacheChoice, settings: Settings, clock: Callable[[], float]) -> Built:
    """The scheduler of ``choice`` for ``settings`` (the region stubbed). O(num_blocks).

    Raises:
        ValueError: an unknown ``kind`` or planted bug, or a planted bug of another
            kind than ``plugin``; CacheOptionError: a bad option.
    """
    from vllm.distributed.ec_transfer.ec_connector.cpu.scheduler import ECCPUScheduler

    if choice.planted and choice.kind != "plugin":
        raise ValueError(f"a planted scheduler is the plugin's, not {choice.kind!r}'s")

    if choice.kind == "upstream":
        with fake_region():
            return Built(ECCPUScheduler(vllm_config(settings)), None)
    options = parse_options({"embedding_cache": dict(choice.options)})
    make = project_cache(options, choice.traced, clock)
    if choice.kind == "project":
        with fake_region(), mock.patch(f"{SCHEDULER_MODULE}.EmbeddingCache", make):
            scheduler = ECCPUScheduler(vllm_config(settings))
        return Built(scheduler, _trace_of(scheduler._cache))
    if choice.kind == "plugin":
        from .planted import planted_scheduler
        from .plugin import plugin_scheduler

        config = vllm_config(dataclasses.replace(settings, cache_options=choice.options))
        planted = planted_scheduler(choice.planted) if choice.planted else None
        with fake_region():
            plugin = plugin_scheduler(config, clock, make if choice.traced else None, planted)
        return Built(plugin, _trace_of(plugin.cache))
    raise ValueError(f"unknown cache choice {choice.kind!r}; the choices are {', '.join(KINDS)}")
