"""The drop-in, inside vLLM's real scheduler: upstream's class and the project's default
build (fifo, stack) give the same ``meta.saves`` and ``meta.loads``, block ids
included, step for step, on long streams.

``ECCPUScheduler`` runs unchanged; only the name ``EmbeddingCache`` it constructs is
patched (``engine.choice``). Each step's meta is compared by a digest of its keys,
block ids, transfer ids and shapes in the meta's order (``engine.result``); a
planted difference in block ids alone (the extents allocator) is caught.
"""

from __future__ import annotations

import dataclasses

import pytest

from embedding_cache_checker.engine import (
    CacheChoice,
    Counters,
    EngineSpec,
    Settings,
    StreamSpec,
    first_difference,
    run,
)
from embedding_cache_checker.engine.figures import DROP_IN, LEAK


def _totals(counters: Counters) -> Counters:
    return dataclasses.replace(counters, step_seconds=[])


@pytest.mark.parametrize(("settings", "stream"), [DROP_IN, LEAK], ids=["131072x3000", "16384x1500"])
def test_upstream_and_the_default_build_give_the_same_metas(
    settings: Settings, stream: StreamSpec
) -> None:
    upstream = run(EngineSpec(stream, settings, CacheChoice("upstream")))
    ours = run(EngineSpec(stream, settings, CacheChoice("project")))
    assert first_difference(upstream.records, ours.records) is None
    assert _totals(upstream.counters) == _totals(ours.counters)
    assert upstream.end == ours.end
    c = ours.counters
    assert c.steps == stream.steps and c.saves > 0 and c.loads > 0
    assert c.saved_blocks > settings.num_blocks  # the pool was full: it evicted
    print(
        f"\n{settings.num_blocks} blocks, {c.steps} steps: {c.saves} saves and {c.loads} loads "
        f"identical; scheduler {sum(upstream.counters.step_seconds):.2f} s (upstream) vs "
        f"{sum(c.step_seconds):.2f} s (project)"
    )


def test_a_difference_in_block_ids_alone_is_caught() -> None:
    """Non-vacuity: the extents allocator takes other ids for the same entries."""
    settings, stream = Settings(num_blocks=16_384), StreamSpec(steps=100)
    upstream = run(EngineSpec(stream, settings, CacheChoice("upstream")))
    extents = run(EngineSpec(stream, settings, CacheChoice("project", (("allocator", "extents"),))))
    where = first_difference(upstream.records, extents.records)
    assert where is not None
    step = int(where.split(":")[0].removeprefix("step "))
    # The same keys and transfer ids: only the block ids differ.
    assert upstream.records[step].saves == extents.records[step].saves
    assert upstream.records[step].loads == extents.records[step].loads
