"""The runs the tests assert and the figures are measured on (the bench can reuse them).

- ``DROP_IN``: upstream's class and the project's default build inside the
  unchanged scheduler give the same metas, block ids included, step for step.
- ``LEAK``: the pool and stream on which upstream's order loses checked hits
  (the issue's figures: 16,384 blocks, 1,500 steps); ``LEAK_SHORT``, the same
  pool on a shorter stream, for the per-configuration tests.
- ``CONFIGURATIONS``: the cache configurations the plugin is held to, each
  under every policy of ``EVICTION_POLICIES`` (``plugin_options``).
"""

from __future__ import annotations

from typing import Any

from embedding_cache import EVICTION_POLICIES

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
