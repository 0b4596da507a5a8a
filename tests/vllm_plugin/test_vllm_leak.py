"""The leak in vLLM's real scheduler, and the plugin that has none.

With vLLM's order and upstream's class, a computed item's alloc evicts a hit the
check just reported: the hit is not loaded, its producer side allocates it again
and dispatches a save the worker never makes, and the entry stays not-ready,
its blocks held, for ever (spec/PROTOCOLS.md section 3). The plugin leases the
hit at the check; it ends every run with nothing lost, nothing never-ready,
nothing held, under every policy and configuration (``engine.figures``). The
checked build: tests/vllm_plugin/test_vllm_leak_checked.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from plugin_calls import report, request, save, scheduler

from embedding_cache_checker.engine import (
    CacheChoice,
    EngineSpec,
    RunResult,
    Settings,
    StreamSpec,
    run,
)
from embedding_cache_checker.engine.figures import LEAK, LEAK_SHORT, plugin_options
from embedding_cache_checker.engine.run import Engine
from embedding_cache_checker.engine.stream import Request


def figures(label: str, result: RunResult) -> str:
    c, e = result.counters, result.end
    return (
        f"{label}: {c.steps} steps, {c.hits} checked hits, {c.checked_hits_lost} lost, "
        f"{c.saves_never_made} saves never made, {e.never_ready} never-ready entries "
        f"holding {e.never_ready_blocks} blocks, {e.held_blocks} held, "
        f"has_pending_push_work() {e.pending_push_work}"
    )


def assert_nothing_leaks(result: RunResult) -> None:
    c, e = result.counters, result.end
    assert (c.checked_hits_lost, c.saves_never_made, c.reused_in_flight) == (0, 0, 0)
    assert (e.never_ready, e.never_ready_blocks, e.held_entries, e.held_blocks) == (0, 0, 0, 0)
    assert e.pending_push_work is False


def test_upstream_loses_checked_hits_and_holds_their_blocks_for_ever() -> None:
    settings, stream = LEAK
    result = run(EngineSpec(stream, settings, CacheChoice("upstream")))
    print("\n" + figures(f"upstream, {settings.num_blocks} blocks", result))
    c, e = result.counters, result.end
    assert c.checked_hits_lost > 0 and c.saves_never_made > 0
    assert e.never_ready > 0 and e.never_ready_blocks > 0
    assert e.pending_push_work is True  # vLLM would keep stepping for ever
    assert c.reused_in_flight == 0  # the leak holds blocks; it never hands out busy ones


@pytest.mark.parametrize(
    ("label", "options"), plugin_options(), ids=[label for label, _ in plugin_options()]
)
def test_the_plugin_leaks_nothing(label: str, options: tuple[tuple[str, Any], ...]) -> None:
    settings, stream = LEAK_SHORT
    result = run(EngineSpec(stream, settings, CacheChoice("plugin", options)))
    print("\n" + figures(f"plugin {label}", result))
    assert_nothing_leaks(result)
    c = result.counters
    assert c.loads == c.hits > 0 and c.saved_blocks > settings.num_blocks


@pytest.mark.parametrize("role", ["ec_producer", "ec_consumer"])
def test_one_role_alone_leaks_nothing(role: str) -> None:
    settings = Settings(LEAK_SHORT[0].num_blocks, role=role)
    for kind in ("upstream", "plugin"):
        result = run(EngineSpec(StreamSpec(steps=200), settings, CacheChoice(kind)))
        assert_nothing_leaks(result)
        assert result.counters.hits == 0  # producer: never a hit; consumer: nothing saved


def test_the_plugin_with_unscheduled_requests_and_two_ranks_leaks_nothing() -> None:
    """vLLM may check a request and not schedule it: its leases end with the step."""
    settings, stream = LEAK_SHORT
    settings = Settings(settings.num_blocks, ranks=2)
    stream = StreamSpec(steps=stream.steps, unscheduled=0.3)
    result = run(EngineSpec(stream, settings, CacheChoice("plugin", (("eviction", "gdsf"),))))
    assert result.counters.unscheduled > 0
    assert_nothing_leaks(result)


def _counterexample(kind: str) -> Engine:
    """MCProtocolTodaySaves on the real scheduler: k1 (1 block) and k2 (2) cached in a
    pool of 3, then a request for k1 (a hit) and k3 (2 blocks, computed)."""
    engine = Engine(EngineSpec(settings=Settings(num_blocks=3), choice=CacheChoice(kind)))
    engine.step(0, [Request((("k1", 1),))])
    engine.step(1, [Request((("k2", 2),))])
    engine.step(2, [Request((("k1", 1), ("k3", 2)))])
    return engine


def test_tlc_s_counterexample_loses_the_hit_upstream_and_not_in_the_plugin() -> None:
    upstream = _counterexample("upstream")
    assert upstream.records[2].saves == ("k3", "k1")  # k1 saved, never computed
    assert upstream.records[2].loads == ()
    assert (upstream.counters.checked_hits_lost, upstream.counters.saves_never_made) == (1, 1)
    plugin = _counterexample("plugin")
    assert plugin.records[2].saves == ("k3",)
    assert [key for key, _ in plugin.records[2].loads] == ["k1"]
    assert (plugin.counters.checked_hits_lost, plugin.counters.saves_never_made) == (0, 0)
    plugin.drain()
    assert plugin.end_state().held_blocks == 0


def test_a_hit_checked_twice_holds_one_lease_and_the_load_is_its_pin() -> None:
    sched = scheduler(num_blocks=8)
    save(sched, "a", 2)
    assert sched.has_cache_item("a") and sched.has_cache_item("a")
    assert sched.cache.get("a").pin_count == 1
    sched.update_state_after_alloc(request("r1", ("a", 2)), 0)
    sched.update_state_after_alloc(request("r2", ("a", 2)), 0)  # a second request: no 2nd load
    meta = sched.build_connector_meta(None)
    (transfer_id, _block_ids, shape) = meta.loads["a"]
    assert list(meta.loads) == ["a"] and meta.saves == {} and shape == (2, 16)
    assert sched.cache.get("a").pin_count == 1  # the lease, held through the load
    sched.update_connector_output(report(loads=[transfer_id]))
    assert sched.cache.get("a").pin_count == 0
    sched.update_connector_output(report(loads=[transfer_id]))  # replayed: ignored
    assert sched.cache.get("a").pin_count == 0 and not sched.has_pending_push_work()


def test_a_checked_request_not_scheduled_releases_its_lease_at_the_step_s_end() -> None:
    sched = scheduler(num_blocks=8)
    save(sched, "a", 2)
    assert sched.has_cache_item("a")
    assert sched.has_pending_push_work()  # the lease holds a pin
    meta = sched.build_connector_meta(None)
    assert meta.loads == {} and sched.cache.get("a").pin_count == 0
    assert not sched.has_pending_push_work()


def test_shutdown_releases_every_lease() -> None:
    sched = scheduler(num_blocks=8)
    save(sched, "a", 2)
    save(sched, "b", 2)
    assert sched.has_cache_item("a") and sched.has_cache_item("b")
    sched.update_state_after_alloc(request("r", ("a", 2)), 0)
    sched.build_connector_meta(None)
    assert sched.has_cache_item("b")  # checked in the next step, not yet loaded
    cache = sched.cache
    sched.shutdown()
    assert cache.get("a").pin_count == 0 and cache.get("b").pin_count == 0
    assert not cache.has_held_entries() and sched._region.cleaned
