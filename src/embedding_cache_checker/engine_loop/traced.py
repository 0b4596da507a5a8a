"""Traced connectors for the real loop: every call on the project's cache recorded.

vLLM's factory builds a connector from its class name, with nothing else, so the
clock the traced caches read is this module's ``CLOCK`` (a fake one, moved by the
loop one second per engine step, as the lease trace spec reads time), and the
cache each built scheduler holds is found through ``last_trace()``.

- ``TracedVllmConnector``: vLLM's ``ECCPUScheduler``, unchanged (vLLM's order), on
  the project's default-build cache traced (the drop-in of upstream's class);
- ``TracedPluginConnector``: the plugin's ``VerifiedECCPUScheduler``, its cache
  traced (the same options).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vllm.distributed.ec_transfer.ec_connector.cpu.connector import ECCPUConnector
from vllm.distributed.ec_transfer.ec_connector.cpu.scheduler import ECCPUScheduler

from embedding_cache_vllm.connector import VerifiedECCPUConnector
from embedding_cache_vllm.options import parse_options
from embedding_cache_vllm.scheduler import VerifiedECCPUScheduler

from ..engine.choice import project_cache
from ..engine.plugin import TracedPluginScheduler
from ..engine.run import FakeClock
from ..tracing import TracedEmbeddingCache, TraceStep

if TYPE_CHECKING:
    from vllm.config import VllmConfig

#: The clock every traced cache reads (whole seconds, moved by the loop).
CLOCK = FakeClock()
_built: list[TracedEmbeddingCache] = []


def last_trace() -> list[TraceStep]:
    """The trace of the cache the last traced connector built."""
    return _built[-1].trace


class TracedVllmScheduler(ECCPUScheduler):
    """vLLM's scheduler as shipped, on the project's traced cache."""

    def __init__(self, vllm_config: VllmConfig) -> None:
        super().__init__(vllm_config)
        make = project_cache(parse_options({}), True, CLOCK)
        cache = make(self._region.num_blocks)
        assert isinstance(cache, TracedEmbeddingCache)
        _built.append(cache)
        # The project's class is a drop-in for upstream's (tests/vllm_plugin/test_vllm_drop_in.py).
        self._cache = cache  # type: ignore[assignment]


class TracedVllmConnector(ECCPUConnector):
    def _make_scheduler(self, vllm_config: VllmConfig) -> ECCPUScheduler:
        return TracedVllmScheduler(vllm_config)


class TracedPluginConnector(VerifiedECCPUConnector):
    def _make_scheduler(self, vllm_config: VllmConfig) -> VerifiedECCPUScheduler:
        ec = vllm_config.ec_transfer_config
        assert ec is not None
        make = project_cache(parse_options(ec.ec_connector_extra_config), True, CLOCK)
        scheduler = TracedPluginScheduler(vllm_config, CLOCK, make)
        assert isinstance(scheduler.cache, TracedEmbeddingCache)
        _built.append(scheduler.cache)
        return scheduler
