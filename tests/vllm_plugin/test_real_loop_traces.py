"""TLC checks traces recorded from vLLM's real engine loop against the protocol model.

Each run (``verify.engine_traces.LOOP_TRACES``) drives vLLM's engine-core scheduler
with a traced connector and is checked two ways: the cache's calls against the
cache's spec, and the merged record against tla/protocol/ with the GPU encoder
cache (``GpuCache``; ``KeepRule`` for the plugin). On the hand-written leak vLLM's
order is rejected at SaveOfComputedProp, at the producer side of the item the
worker keeps; the plugin's record of the same script is accepted, and so are both
orders on a random stream under ``AsyncScheduler`` and ``Scheduler``.
"""

from __future__ import annotations

import pytest

from embedding_cache_checker.tlc.manifest import find_tla_dir
from embedding_cache_checker.verify import engine_traces as et

TLA = find_tla_dir()


def test_the_leak_s_trace_is_rejected_at_save_of_computed_prop() -> None:
    verdict = et.check_loop("loop-vllm-leak", TLA)
    assert verdict.never_made == 1 and verdict.cache.accepted
    p = verdict.protocol
    assert not p.accepted and p.violated == "SaveOfComputedProp", p.said()
    # X's producer side: the alloc of an item the worker keeps and never encodes.
    assert "Updated(request p6, X, computed), producer side: alloc('X', 2)" in p.event
    assert p.step == 29
    assert verdict.ok


@pytest.mark.parametrize("name", ["loop-plugin-leak", "loop-plugin", "loop-vllm-sync"])
def test_real_loop_traces_are_accepted(name: str) -> None:
    verdict = et.check_loop(name, TLA)
    assert verdict.cache.accepted and verdict.protocol.accepted, verdict.lines()
    assert verdict.protocol.steps > 20 and verdict.ok
