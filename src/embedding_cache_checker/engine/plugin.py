"""The plugin's scheduler as the harness builds it, with a traced cache when asked.

Untraced, it is ``VerifiedECCPUScheduler`` itself: its cache built by its own
``new_cache`` from the options in ``ec_connector_extra_config``. Traced, a
subclass builds the same cache as a ``TracedEmbeddingCache`` (the same options,
through ``choice``'s factory), and the plugin's code runs otherwise unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from embedding_cache import EmbeddingCache
from embedding_cache_vllm.scheduler import VerifiedECCPUScheduler

if TYPE_CHECKING:
    from vllm.config import VllmConfig


class TracedPluginScheduler(VerifiedECCPUScheduler):
    """``VerifiedECCPUScheduler`` whose cache comes from ``make``."""

    def __init__(
        self,
        vllm_config: VllmConfig,
        clock: Callable[[], float],
        make: Callable[[int], EmbeddingCache],
    ) -> None:
        self._make = make
        super().__init__(vllm_config, clock=clock)

    def new_cache(self, num_blocks: int) -> EmbeddingCache:
        return self._make(num_blocks)


def plugin_scheduler(
    config: VllmConfig,
    clock: Callable[[], float],
    make: Callable[[int], EmbeddingCache] | None = None,
) -> VerifiedECCPUScheduler:
    """The plugin's scheduler for ``config``; its cache built by ``make`` if given."""
    if make is None:
        return VerifiedECCPUScheduler(config, clock=clock)
    return TracedPluginScheduler(config, clock, make)
