"""The plugin on vLLM 0.33's real engine loop (``embedding_cache_checker.engine_loop``).

vLLM's own ``Scheduler`` and ``AsyncScheduler`` (the default), unpatched, on CPU;
the connector made by vLLM's factory; a worker that follows the V2 model runner,
GPU encoder cache included. Upstream's connector leaks there, in a two-step case
and on random streams; the plugin does not; the plugin with its worker-keeps rule
put back leaks again, and the plugin releasing a load's lease at the first rank's
report hands out blocks a rank still reads. An item larger than the pool stops
upstream's engine and not the plugin's. The checked build:
tests/vllm_plugin/test_real_loop_checked.py.
"""

from __future__ import annotations

import dataclasses
import logging

import pytest
from real_loop_calls import model_dir

from embedding_cache_checker.engine_loop import (
    ArrivalSpec,
    EngineSettings,
    LoopResult,
    LoopSpec,
    StepEvents,
    WorkerFaults,
    run,
    scripted,
)
from embedding_cache_checker.engine_loop.figures import (
    MATRIX_STREAM,
    TWO_STEP_SCRIPT,
    TWO_STEP_SETTINGS,
    counts,
    matrix_runs,
)

SCHEDULERS = {"async": True, "sync": False}


def assert_nothing_leaks(result: LoopResult) -> None:
    figures = counts(result)
    assert figures["never_made"] == 0, figures
    assert figures["never_ready"] == 0 and figures["held_blocks"] == 0, figures
    assert figures["lost"] == 0 and figures["encoder_misses"] == 0, figures
    assert figures["reused_in_flight"] == 0, figures
    assert figures["push_work"] is False and figures["idle"] is True, figures


def two_step(connector: str, async_scheduling: bool) -> LoopResult:
    settings = dataclasses.replace(
        TWO_STEP_SETTINGS, connector=connector, async_scheduling=async_scheduling
    )
    return run(LoopSpec(settings, idle_limit=50), model_dir(), TWO_STEP_SCRIPT)


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_the_two_step_case_leaks_upstream(scheduler: str) -> None:
    result = two_step("upstream", SCHEDULERS[scheduler])
    figures = counts(result)
    # X's save is dispatched, never made: X stays not-ready, its 20 blocks held,
    # and vLLM never goes idle.
    assert figures["never_made"] == 1 and figures["never_ready"] == 1, figures
    assert figures["held_blocks"] == 20 and figures["push_work"] is True, figures
    assert figures["idle"] is False


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_the_two_step_case_is_fixed_in_the_plugin(scheduler: str) -> None:
    result = two_step("plugin", SCHEDULERS[scheduler])
    assert_nothing_leaks(result)
    assert result.connector.saves == 3  # A's X, B's W, C's Y: no save of the kept X
    plugin = result.scheduler.ec_connector.connector.connector_scheduler
    assert plugin.unmade_saves_avoided == 1


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_the_plugin_without_its_keep_rule_leaks_again(scheduler: str) -> None:
    figures = counts(two_step("plugin-no-keep-rule", SCHEDULERS[scheduler]))
    assert figures["never_made"] == 1 and figures["never_ready"] == 1, figures
    assert figures["push_work"] is True


def matrix_ids() -> list[str]:
    return [label for label, _ in matrix_runs(True)]


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("label", matrix_ids())
def test_the_real_loop_matrix(scheduler: str, label: str) -> None:
    settings = dict(matrix_runs(SCHEDULERS[scheduler]))[label]
    result = run(LoopSpec(settings, MATRIX_STREAM, idle_limit=3_000), model_dir())
    figures = counts(result)
    print(f"\n{scheduler} {label}: {figures}")
    assert result.connector.checks > 0 and result.preemptions > 0, figures
    assert result.connector.checked_not_scheduled > 0, figures
    # The older model's order (engine.run) holds on the real loop.
    assert figures["order_breaks"] == 0 and figures["updates"] > 0, figures
    if label == "upstream":  # the leak, on the same stream
        assert figures["never_made"] > 0 and figures["never_ready"] > 0, figures
        assert figures["push_work"] is True, figures
        return
    assert_nothing_leaks(result)
    assert figures["loads"] == figures["hits"] - figures["checked_not_scheduled"] or (
        0 < figures["loads"] <= figures["hits"]
    ), figures


def test_a_lease_released_before_the_last_rank_reports_is_caught() -> None:
    # Two ranks; rank 1 reports each load 2 to 4 steps after rank 0; a small pool
    # evicts soon after each load's lease ends.
    base = dataclasses.replace(
        EngineSettings(
            ec_blocks=1_024,
            encoder_cache_size=512,
            encoder_compute_budget=512,
            max_num_batched_tokens=512,
            kv_blocks=256,
        ),
        ranks=2,
    )
    faults = WorkerFaults(report_delay=(0, 0), other_ranks_delay=(2, 4))
    stream = ArrivalSpec(steps=600, catalogue=60, rows=(16, 128), arrivals=(1, 3))
    for connector, caught in (("plugin", False), ("plugin-early-release", True)):
        settings = dataclasses.replace(base, connector=connector)
        result = run(LoopSpec(settings, stream, faults, idle_limit=500), model_dir())
        figures = counts(result)
        print(f"\n{connector}: {figures}")
        assert figures["loads"] > 0 and figures["saves"] > 0, figures
        assert (figures["reused_in_flight"] > 0) is caught, figures
        assert figures["idle"] is True, figures


#: A 200-row pool (25,600 bytes) behind a GPU encoder cache that holds a 300-row item.
OVERSIZE = dataclasses.replace(TWO_STEP_SETTINGS, ec_blocks=200, encoder_cache_size=512)


def oversize_script() -> tuple[StepEvents, ...]:
    return (
        StepEvents((scripted("A", [("small", 40)]),), None),
        StepEvents((scripted("B", [("huge", 300)]),), None),
        *[StepEvents((), None)] * 4,
        StepEvents((scripted("C", [("small", 40)]),), None),
    )


def test_an_item_larger_than_the_pool_stops_upstreams_engine() -> None:
    settings = dataclasses.replace(OVERSIZE, connector="upstream")
    with pytest.raises(AssertionError):
        run(LoopSpec(settings, idle_limit=50), model_dir(), oversize_script())


def test_an_item_larger_than_the_pool_is_computed_not_cached() -> None:
    settings = dataclasses.replace(OVERSIZE, connector="plugin")
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep()
    logger = logging.getLogger("embedding_cache_vllm.scheduler")
    logger.addHandler(handler)
    try:
        result = run(LoopSpec(settings, idle_limit=50), model_dir(), oversize_script())
    finally:
        logger.removeHandler(handler)
    assert_nothing_leaks(result)
    scheduler = result.scheduler.ec_connector.connector.connector_scheduler
    assert scheduler.oversize_items == 1
    warnings = [r.getMessage() for r in records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert "ec_cpu_bytes" in warnings[0] and "huge" in warnings[0], warnings
    assert str(300 * 128) in warnings[0]  # its size in bytes: 300 rows of 128 bytes
    small = scheduler.cache.get("small")  # the pool still caches the others
    assert small is not None and small.ready and scheduler.cache.get("huge") is None


@pytest.mark.parametrize("label", matrix_ids()[1:])
def test_the_plugin_with_two_ranks_and_late_reports(label: str) -> None:
    # Two ranks, the second reporting each load 1 to 4 steps after the first.
    settings = dataclasses.replace(dict(matrix_runs(True))[label], ranks=2)
    faults = WorkerFaults(report_delay=(0, 2), other_ranks_delay=(1, 4), seed=1)
    stream = dataclasses.replace(MATRIX_STREAM, steps=1_000, seed=1)
    result = run(LoopSpec(settings, stream, faults, idle_limit=3_000), model_dir())
    assert_nothing_leaks(result)
    assert result.connector.loads > 0 and result.preemptions > 0


class FakePosition:
    """vLLM's `PlaceholderRange` as the recorder reads it: its embedding count."""

    def get_num_embeds(self) -> int:
        return 4


class FakeFeature:
    def __init__(self, identifier: str) -> None:
        self.identifier = identifier
        self.mm_position = FakePosition()


class FakeRequest:
    def __init__(self, request_id: str, keys: list[str]) -> None:
        self.request_id = request_id
        self.mm_features = [FakeFeature(k) for k in keys]


class FakeConnector:
    def __init__(self, hits: set[str]) -> None:
        self.hits = hits

    def has_cache_item(self, identifier: str) -> bool:
        return identifier in self.hits

    def update_state_after_alloc(self, request: object, index: int) -> None:
        pass


def test_the_order_check_catches_an_order_the_model_does_not_make() -> None:
    from embedding_cache_checker.engine_loop.recorder import Recorder

    request = FakeRequest("r", ["hit", "miss", "unchecked"])
    good = Recorder(FakeConnector({"hit"}))
    good.has_cache_item("hit")
    good.has_cache_item("miss")
    good.update_state_after_alloc(request, 1)  # computed first
    good.update_state_after_alloc(request, 0)  # then the load
    assert good.counts.order_breaks == 0
    assert good.accesses == [("miss", 4), ("hit", 4)]
    bad = Recorder(FakeConnector({"hit"}))
    bad.has_cache_item("hit")
    bad.has_cache_item("miss")
    bad.update_state_after_alloc(request, 0)  # the load first
    bad.update_state_after_alloc(request, 1)  # a computed item after it
    bad.update_state_after_alloc(request, 2)  # never checked
    assert bad.counts.order_breaks == 2
