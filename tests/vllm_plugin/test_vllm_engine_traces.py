"""The real engine's traces checked by TLC (spec/PROTOCOLS.md section 7).

Runs of vLLM 0.33's real scheduler, recorded by the harness (its cache's calls and the
engine's events), are checked two ways: the cache's calls against the cache's spec
(tla/trace/EmbeddingCacheTrace.tla, with leases for the plugin), and the merged
record against the protocol model (tla/trace/EmbeddingCacheProtocolTrace.tla over
tla/protocol/EmbeddingCacheProtocol.tla). vLLM's order loses a checked hit on the
engine-trace stream and is rejected by SaveOfComputedProp at the step where it saves
the hit it lost; the plugin, on the same stream, is accepted; each planted bug of the
plugin is rejected at its first wrong step.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from embedding_cache_checker.cli import main
from embedding_cache_checker.engine import CacheChoice, EngineSpec, Settings
from embedding_cache_checker.engine.run import Engine
from embedding_cache_checker.engine.stream import Request
from embedding_cache_checker.tlc.manifest import find_tla_dir
from embedding_cache_checker.verify import engine_traces as et
from embedding_cache_checker.verify.alloc_rule import SEED_RULE
from embedding_cache_checker.verify.protocol_steps import protocol_steps
from embedding_cache_checker.verify.protocol_traces import (
    INVARIANTS,
    ProtocolRecord,
    validate_protocol,
)
from embedding_cache_checker.verify.traces import validate_traces

TLA = find_tla_dir()
#: Where vLLM's order breaks on ENGINE_TRACE: request 18-0 asks for mm-00003 and
#: mm-00004 (both hits) and mm-00005 (computed); mm-00005's alloc evicts mm-00004, and
#: mm-00004's producer side allocates it again and dispatches its save.
LOSS_STEP, LOSS_KEY = 179, "mm-00004"


@pytest.fixture(scope="module")
def records() -> dict[str, et.EngineRecord]:
    return {name: et.record(name) for name in et.SCHEDULERS}


def test_every_call_lands_in_one_step_and_none_is_unexpected(
    records: dict[str, et.EngineRecord],
) -> None:
    for name in ("vllm", "plugin"):
        result = records[name].result
        steps = records[name].protocol_record().steps
        calls = [s.call for s in steps if s.call is not None]
        assert calls == [c for c in result.trace or [] if c.op != "tick"], name
        assert "unexpected" not in {s.act for s in steps}, name


def test_vllm_order_loses_the_hit_on_the_stream_and_the_plugin_not(
    records: dict[str, et.EngineRecord],
) -> None:
    vllm, plugin = records["vllm"].result.counters, records["plugin"].result.counters
    assert (vllm.checked_hits_lost, vllm.saves_never_made) == (1, 1)
    assert records["vllm"].result.end.never_ready == 1
    assert (plugin.checked_hits_lost, plugin.saves_never_made) == (0, 0)
    assert vllm.unscheduled == plugin.unscheduled > 0  # Unschedule is exercised


@pytest.mark.parametrize("name", ["vllm", "plugin"])
def test_the_cache_calls_are_accepted_by_the_cache_spec(
    records: dict[str, et.EngineRecord], name: str
) -> None:
    rec = records[name]
    assert rec.result.trace is not None
    [verdict] = validate_traces([(rec.result.trace, rec.num_blocks, SEED_RULE)], TLA)
    print(f"\n{name}: {verdict.steps} calls, TLC {verdict.seconds:.1f} s")
    assert verdict.accepted, verdict.detail
    ops = {step.op for step in rec.result.trace}
    assert ("lease" in ops and "tick" in ops) == (name == "plugin")  # the lease spec's


def test_vllm_order_is_rejected_by_save_of_computed_at_the_re_alloc_of_the_lost_hit(
    records: dict[str, et.EngineRecord],
) -> None:
    record = records["vllm"].protocol_record()
    verdict = validate_protocol(record, TLA)
    print(f"\nvllm: {verdict.said()} (TLC {verdict.seconds:.1f} s)")
    assert (verdict.violated, verdict.step) == ("SaveOfComputedProp", LOSS_STEP)
    step = record.steps[LOSS_STEP - 1]
    assert (step.act, step.key, step.call and step.call.op) == ("produce", LOSS_KEY, "alloc")
    assert "Updated(request 18-0, mm-00004, loaded)" in verdict.event


@pytest.mark.parametrize(
    ("check", "step", "act"),
    [
        ("CheckedHitPinnedProp", LOSS_STEP + 1, "load"),  # its consumer side pins nothing
        ("SaveResolvedAtEndInv", None, None),  # the end: mm-00004 never ready
    ],
)
def test_each_check_alone_names_its_own_step(
    records: dict[str, et.EngineRecord], check: str, step: int | None, act: str | None
) -> None:
    record = records["vllm"].protocol_record()
    verdict = validate_protocol(record, TLA, checks=(check,))
    assert verdict.violated == check
    assert verdict.step == (step or len(record.steps))
    assert act is None or verdict.act == act


def test_vllm_s_trace_is_a_behaviour_of_its_order_s_model(
    records: dict[str, et.EngineRecord],
) -> None:
    """Without the protocol's checks it is accepted: a violation, not a misfit."""
    checks = [c for c in INVARIANTS if not c.endswith("AtEndInv")]
    assert validate_protocol(records["vllm"].protocol_record(), TLA, checks=checks).accepted


def test_the_plugin_is_accepted_and_not_a_behaviour_of_vllm_s_order(
    records: dict[str, et.EngineRecord],
) -> None:
    record = records["plugin"].protocol_record()
    verdict = validate_protocol(record, TLA)
    print(f"\nplugin: {verdict.said()} (TLC {verdict.seconds:.1f} s)")
    assert verdict.accepted
    as_vllm = ProtocolRecord(record.steps, record.num_blocks, "vllm", record.need)
    wrong = validate_protocol(as_vllm, TLA)
    assert wrong.violated is None and wrong.act == "check_item"  # vLLM's check leases nothing


@pytest.mark.parametrize(
    ("name", "act", "op"),
    [
        ("save-for-hit", "save_dispatched", None),  # a save the model never dispatched
        ("early-release", "unschedule", "release_lease"),  # a loaded item's pin released
    ],
)
def test_a_planted_bug_is_rejected_at_its_first_wrong_step(
    records: dict[str, et.EngineRecord], name: str, act: str, op: str | None
) -> None:
    record = records[name].protocol_record()
    verdict = validate_protocol(record, TLA)
    print(f"\n{name}: {verdict.said()} (TLC {verdict.seconds:.1f} s)")
    assert not verdict.accepted and verdict.violated is None and verdict.act == act
    step = record.steps[(verdict.step or 0) - 1]
    assert (step.call.op if step.call else None) == op


def _counterexample(kind: str) -> Engine:
    """MCProtocolVllmSaves's counterexample (tests/vllm_plugin/test_vllm_leak.py) on the
    real scheduler, recorded: k1 and k2 cached in a pool of 3, then k1 (a hit) and k3."""
    spec = EngineSpec(
        settings=Settings(num_blocks=3),
        choice=CacheChoice(kind, traced=True),
        step_seconds=et.STEP_SECONDS,
        record_events=True,
    )
    engine = Engine(spec)
    engine.step(0, [Request((("k1", 1),))])
    engine.step(1, [Request((("k2", 2),))])
    engine.step(2, [Request((("k1", 1), ("k3", 2)))])
    engine.drain()
    return engine


@pytest.mark.parametrize(("kind", "order"), [("project", "vllm"), ("plugin", "safe")])
def test_tlc_s_counterexample_on_the_real_scheduler_is_rejected_at_the_same_action(
    kind: str, order: str
) -> None:
    engine = _counterexample(kind)
    assert engine.trace is not None
    steps = protocol_steps(engine.events, engine.trace, 3)
    verdict = validate_protocol(ProtocolRecord(steps, 3, order, {"k1": 1, "k2": 2, "k3": 2}), TLA)
    if kind == "plugin":
        assert verdict.accepted
        return
    assert (verdict.violated, verdict.step, verdict.act) == ("SaveOfComputedProp", 20, "produce")
    assert steps[19].call is not None and steps[19].call.key == "k1"  # alloc('k1', 1)


def test_the_command_prints_each_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["tlc", "--engine-trace", "early-release", "--engine-steps", "5", "--json"])
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert code == 0 and report["mode"] == "engine-trace"
    [trace] = report["traces"]
    assert trace["ok"] and trace["cache"]["accepted"] and trace["expected"] == "rejected"
    assert trace["protocol"]["act"] == "unschedule" and trace["protocol"]["violated"] is None
    assert main(["tlc", "--engine-trace", "nonesuch"]) == 2
