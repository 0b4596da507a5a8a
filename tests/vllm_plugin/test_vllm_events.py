"""The engine's event record and the cache's trace, merged by ``cache_at``.

A traced run records every cache call (``TracedEmbeddingCache``) beside the
engine's events (``engine.events``); each event's ``cache_at`` says where it falls
in the trace, so the cache calls each event caused can be read off. Tracing and
recording change nothing the scheduler does.
"""

from __future__ import annotations

from embedding_cache_checker.engine import CacheChoice, EngineSpec, Settings, StreamSpec, run
from embedding_cache_checker.engine import events as ev
from embedding_cache_checker.engine.figures import plugin_options
from embedding_cache_checker.tracing import TraceStep

SETTINGS, STREAM = Settings(num_blocks=4_096), StreamSpec(steps=60, unscheduled=0.2)


def caused(trace: list[TraceStep], events: list[ev.Event], index: int) -> list[TraceStep]:
    """The cache steps between event ``index - 1`` and event ``index``."""
    start = events[index - 1].cache_at if index else 0
    return trace[start : events[index].cache_at]


def check_cache_calls(trace: list[TraceStep], events: list[ev.Event]) -> int:
    """Each event's cache calls are what it should cause; the number of leases taken."""
    leases = 0
    for index, event in enumerate(events):
        ops = [s.op for s in caused(trace, events, index) if s.op != "tick"]
        if isinstance(event, ev.Checked):
            # A hit: a new lease, or none (the step's, reused). A miss: the key is
            # absent (no call), or present and not ready (a lease that holds nothing).
            assert ops in ([], ["lease"])
            leases += event.hit and ops == ["lease"]
        elif isinstance(event, ev.Reported) and event.loads:
            assert "release_lease" in ops
    return leases


def test_a_traced_plugin_run_records_each_cache_call_under_its_event() -> None:
    spec = EngineSpec(STREAM, SETTINGS, CacheChoice("plugin", traced=True), record_events=True)
    result = run(spec)
    trace, events = result.trace, result.events
    assert trace is not None and events
    assert [e.cache_at for e in events] == sorted(e.cache_at for e in events)
    assert sum(isinstance(e, ev.StepBegan) for e in events) == STREAM.steps
    assert sum(isinstance(e, ev.StepEnded) for e in events) == STREAM.steps
    allocs = {(s.key, s.block_ids) for s in trace if s.op == "alloc" and s.block_ids}
    saves = [e for e in events if isinstance(e, ev.SaveDispatched)]
    assert saves and all(e.computed and (e.key, e.block_ids) in allocs for e in saves)
    assert check_cache_calls(trace, events) > 0
    loads = sum(isinstance(e, ev.LoadDispatched) for e in events)
    assert loads == result.counters.loads > 0


def test_tracing_and_recording_change_nothing() -> None:
    plain = run(EngineSpec(STREAM, SETTINGS, CacheChoice("project")))
    traced = run(
        EngineSpec(STREAM, SETTINGS, CacheChoice("project", traced=True), record_events=True)
    )
    assert [r.digest for r in plain.records] == [r.digest for r in traced.records]
    assert plain.trace is None and traced.trace


def test_the_report_prints_one_row_per_run() -> None:
    from embedding_cache_checker.engine import report

    lines = report.table(blocks=2_048, steps=20, seed=0).splitlines()
    assert lines[0].split()[:2] == ["scheduler", "cache"]
    # header, rule, upstream, then project and plugin per policy x configuration
    assert len(lines) == 2 + 1 + 2 * len(plugin_options())
    assert lines[2].startswith("vLLM's") and "upstream's" in lines[2]
