"""The plugin's scheduler as the harness builds it, with a traced cache when asked.

Untraced, it is ``VerifiedECCPUScheduler`` itself: its cache built by its own
``new_cache`` from the options in ``ec_connector_extra_config``. Traced, a
subclass builds the same cache as a ``TracedEmbeddingCache`` (the same options,
through ``choice``'s factory), and the plugin's code runs otherwise unchanged.
A planted bug (``planted``) is a subclass of that subclass, traced or not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from embedding_cache import EmbeddingCache
from embedding_cache_vllm.scheduler import VerifiedECCPUScheduler

if TYPE_CHECKING:
    from vllm.config import VllmConfig


class TracedPluginScheduler(VerifiedECCPUScheduler):
    """``VerifiedECCPUScheduler`` whose cache comes from ``make`` (None: its own)."""

    def __init__(
        self,
        vllm_config: VllmConfig,
        clock: Callable[[], float],
        make: Callable[[int], EmbeddingCache] | None,
    ) -> None:
        self._make = make
        super().__init__(vllm_config, clock=clock)

    def new_cache(self, num_blocks: int) -> EmbeddingCache:
        return super().new_cache(num_blocks) if self._make is None else self._make(num_blocks)


def plugin_scheduler(
    config: VllmConfig,
    clock: Callable[[], float],
    make: Callable[[int], EmbeddingCache] | None = None,
    planted: type[TracedPluginScheduler] | None = None,
) -> VerifiedECCPUScheduler:
    """The plugin's scheduler for ``config``; its cache built by ``make`` if given; of
    the class ``planted`` (a planted bug, ``planted.PLANTED``) if given."""
    if planted is not None:
        return planted(config, clock, make)
    if make is None:
        return VerifiedECCPUScheduler(config, clock=clock)
    return TracedPluginScheduler(config, clock, make)
