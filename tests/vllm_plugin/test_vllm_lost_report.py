"""A lost load report: upstream's pin is held for ever; the plugin's ends at its deadline.

The worker loses one rank's report of a load (``Faults.lost_load_reports``), so the
count of reports never reaches zero. Upstream's scheduler then never unpins; the
plugin's lease is released by the cache itself once the (fake) clock is past its
deadline, and a report that arrives after that is stale and ignored.
"""

from __future__ import annotations

from plugin_calls import report, request, save, scheduler

from embedding_cache_checker.engine import (
    CacheChoice,
    EngineSpec,
    FakeClock,
    Faults,
    Settings,
    StreamSpec,
    run,
)

LEASE = 1.0
STEP = 0.01


def test_the_plugin_s_pins_end_at_the_lease_deadline_upstream_s_never() -> None:
    settings, stream = Settings(num_blocks=16_384), StreamSpec(steps=300)
    faults = Faults(lost_load_reports=0.5)
    options = (("eviction", "sieve"), ("load_lease_seconds", str(LEASE)))
    plugin = run(EngineSpec(stream, settings, CacheChoice("plugin", options), faults, STEP))
    upstream = run(EngineSpec(stream, settings, CacheChoice("upstream"), faults, STEP))
    for result in (plugin, upstream):
        assert result.counters.lost_load_reports > 0
        assert result.end.held_blocks > 0 and result.end.pending_push_work
    # The plugin's last second of lost reports is still leased; nothing else is held.
    assert plugin.end.never_ready == 0 and plugin.counters.checked_hits_lost == 0
    for result in (plugin, upstream):
        result.engine.clock.advance(LEASE + STEP)
    assert plugin.engine.end_state().held_blocks == 0
    assert not plugin.engine.end_state().pending_push_work
    held = upstream.engine.end_state()
    assert held.held_blocks > 0 and held.pending_push_work  # upstream: held for ever
    print(
        f"\nlost load reports: plugin {plugin.counters.lost_load_reports} (all released at "
        f"their deadline), upstream {upstream.counters.lost_load_reports} "
        f"({held.held_entries} entries, {held.held_blocks} blocks pinned for ever)"
    )


def test_a_report_after_the_deadline_is_stale() -> None:
    clock = FakeClock()
    sched = scheduler(num_blocks=8, options=(("load_lease_seconds", 5),), clock=clock)
    save(sched, "a", 2)
    assert sched.has_cache_item("a")
    sched.update_state_after_alloc(request("r", ("a", 2)), 0)
    transfer_id = sched.build_connector_meta(None).loads["a"][0]
    clock.advance(5.0)
    assert sched.cache.get("a").pin_count == 1  # a deadline equal to the clock still holds
    clock.advance(0.5)
    assert not sched.has_pending_push_work()  # the cache expired the lease itself
    assert sched.cache.get("a").pin_count == 0
    sched.build_connector_meta(None)  # the next step forgets the ended load
    assert sched._lease_loads == {}
    # Leased again by a later check, then the old report arrives: it releases nothing.
    assert sched.has_cache_item("a")
    sched.update_state_after_alloc(request("r2", ("a", 2)), 0)
    second = sched.build_connector_meta(None).loads["a"][0]
    sched.update_connector_output(report(loads=[transfer_id]))
    assert sched.cache.get("a").pin_count == 1
    sched.update_connector_output(report(loads=[second]))
    assert sched.cache.get("a").pin_count == 0


def test_a_lease_shorter_than_the_load_lets_its_blocks_be_reused_under_the_copy() -> None:
    """Why ``load_lease_seconds`` must outlast a load (docs/VLLM.md); and the worker's
    block check (``reused_in_flight``) is shown to catch blocks reused in flight."""
    settings, stream, faults = Settings(num_blocks=16_384), StreamSpec(steps=300), Faults(5)
    reused = {}
    for lease in (0.02, 30.0):  # reports come 5 steps (0.05 s) after the dispatch
        options = (("load_lease_seconds", lease),)
        result = run(EngineSpec(stream, settings, CacheChoice("plugin", options), faults, STEP))
        reused[lease] = result.counters.reused_in_flight
        assert result.counters.checked_hits_lost == 0 and result.end.held_blocks == 0
    assert reused[0.02] > 0 and reused[30.0] == 0
