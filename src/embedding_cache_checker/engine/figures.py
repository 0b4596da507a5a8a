"""The runs the tests assert and the figures are measured on (the bench can reuse them).

- ``DROP_IN``: upstream's class and the project's default build inside the
  unchanged scheduler give the same metas, block ids included, step for step.
- ``LEAK``: the pool and stream on which upstream's order loses checked hits
  (the issue's figures: 16,384 blocks, 1,500 steps); ``LEAK_SHORT``, the same
  pool on a shorter stream, for the per-configuration tests.
- ``CONFIGURATIONS``: the cache configurations the plugin is held to, each
  under every policy of ``EVICTION_POLICIES`` (``plugin_options``).
- ``leak_runs``: the rows of the leak table (``report``, ``bench --vllm``):
  upstream's class, then per configuration vLLM's scheduler on the project's
  cache and the plugin.
"""

from __future__ import annotations

from typing import Any

from embedding_cache import EVICTION_POLICIES

from .choice import CacheChoice
from .stream import StreamSpec
from .stubs import Settings

#: (settings, stream) of the drop-in comparison.
DROP_IN = (Settings(num_blocks=131_072), StreamSpec(steps=3_000))
#: (settings, stream) of the leak figures, and a shorter stream for the tests.
LEAK = (Settings(num_blocks=16_384), StreamSpec(steps=1_500))
LEAK_SHORT = (Settings(num_blocks=16_384), StreamSpec(steps=400))
#: Configuration name -> its options beside ``eviction``.
CONFIGURATIONS: dict[str, tuple[tuple[str, Any], ...]] = {
    "stack": (),
    "extents": (("allocator", "extents"),),
    "extents+contiguity4": (("allocator", "extents"), ("contiguity", 4)),
    "doorkeeper": (("admission", "doorkeeper"),),
}


def plugin_options() -> list[tuple[str, tuple[tuple[str, Any], ...]]]:
    """(label, options) for every policy x configuration, in report order."""
    return [
        (f"{policy}/{name}", (("eviction", policy), *extra))
        for policy in EVICTION_POLICIES
        for name, extra in CONFIGURATIONS.items()
    ]


#: The scheduler column of a run: vLLM's own ``ECCPUScheduler`` (today's order), or the plugin's.
SCHEDULER_LABELS = {"upstream": "vLLM's", "project": "vLLM's", "plugin": "plugin"}


def leak_runs() -> list[tuple[str, str, CacheChoice]]:
    """(scheduler, cache, choice) of every row of the leak table, in report order: vLLM's
    scheduler with upstream's class (one row: it has one policy), then for every
    ``plugin_options`` label vLLM's scheduler on the project's cache and the plugin."""
    rows = [(SCHEDULER_LABELS["upstream"], "upstream's", CacheChoice("upstream"))]
    for label, options in plugin_options():
        for kind in ("project", "plugin"):
            rows.append((SCHEDULER_LABELS[kind], label, CacheChoice(kind, options)))
    return rows
