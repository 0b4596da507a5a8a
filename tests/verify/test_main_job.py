"""The main job's report: one summary of all policies, and the same sections per policy.

Built by hand from fabricated results (no TLC, no CrossHair), so these run in
milliseconds; the job itself runs in CI (``embedding-cache verify``).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import threading
import time
from typing import Any

import pytest

from embedding_cache.policies import EVICTION_POLICIES
from embedding_cache_checker.tlc.command import EXIT_SETUP
from embedding_cache_checker.tlc.inductive import PLANTED, inductive_models, layer_of
from embedding_cache_checker.tlc.manifest import default_models, find_tla_dir, load_manifest
from embedding_cache_checker.verify import command
from embedding_cache_checker.verify.crosshair_budget import ConditionResult
from embedding_cache_checker.verify.crosshair_check import CrosshairResult
from embedding_cache_checker.verify.lin import MUTANTS
from embedding_cache_checker.verify.lin import report as lin_report
from embedding_cache_checker.verify.main_job import (
    CI_STEPS,
    LANES,
    LINKS,
    STEPS,
    PlantedResult,
    ReplayRun,
    TraceRun,
    VerifyOptions,
    VerifyReport,
    run_verify,
)
from embedding_cache_checker.verify.options import Job
from embedding_cache_checker.verify.plans import load_plans
from embedding_cache_checker.verify.profile import CI
from embedding_cache_checker.verify.replay import GraphReplayReport, Mismatch
from embedding_cache_checker.verify.report_json import report_json
from embedding_cache_checker.verify.step_models import LARGE_TAGS, own_model, tlc_models
from embedding_cache_checker.verify.step_table import STEP_BY_NAME, STEP_TABLE, Step
from embedding_cache_checker.verify.traces import TraceVerdict
from embedding_cache_checker.verify.verdicts import VERDICTS, run_ok, step_ok

#: The sections every policy has, with the top-level's fields.
SECTIONS = ("tlc", "conformance", "trace_validation", "crosshair", "planted", "linearizability")
#: Every policy's plan, from tla/models.json.
PLANS = load_plans(find_tla_dir())


def _replay(policy: str, model: str, mismatches: int = 0) -> ReplayRun:
    report = GraphReplayReport(policy=policy, states=10, edges_total=40, edges_replayed=40)
    report.disabled_checked = 7
    report.mismatches = [Mismatch("1", "alloc('k1', 1)", "differs")] * mismatches
    return ReplayRun(policy, model, report, True, 1.0, 2.0)


def _condition(policy: str) -> ConditionResult:
    target = "embedding_cache.transitions.alloc"
    return ConditionResult(policy, "alloc", target, "C", "c", "unrefuted", 3, 1.0, "")


def _lin(policy: str, ok: bool = True) -> dict[str, Any]:
    """A linearizability report of one policy, as ``linearizability_report`` writes it."""
    row = {
        "histories": 10,
        "linearizable": 10 if ok else 9,
        "not_linearizable": 0 if ok else 1,
        "undecided": 0,
        "operations": 640,
        "lease_calls": 200,
        "sweep_failures": 0,
        "seconds": 0.5,
        "witness": None if ok else "NOT linearizable: ...",
    }
    hunt = {"caught": True, "histories": 3, "seconds": 0.1}
    return {
        "policies": {policy: row},
        "mutants": {name: {policy: hunt} for name in ("split", "unlocked")},
        "mutants_caught": 2,
        "mutants_total": 2,
        "ok": ok,
    }


def _report(broken: str | None = None) -> VerifyReport:
    """A report of every policy with everything holding, except ``broken``'s replay."""
    report = VerifyReport(policies=tuple(EVICTION_POLICIES))
    details = []
    for policy in EVICTION_POLICIES:
        plan = PLANS[policy]
        report.replays.append(
            _replay(policy, plan.full_replay[0], mismatches=2 if policy == broken else 0)
        )
        verdict = TraceVerdict(100, True, 100, None, 1.0)
        report.traces.append(TraceRun(policy, "sequential-1", verdict))
        details.append(_condition(policy))
        report.planted.append(
            PlantedResult("EvictOneTooMany", policy, "transition", "alloc", True, True, True)
        )
        report.planted.append(
            PlantedResult(f"{policy}-order", policy, "policy", "alloc", True, True, None)
        )
        report.linearizability[policy] = _lin(policy)
    report.crosshair = CrosshairResult(3, 3, 0, tuple(details), 5.0)
    for step in ("conformance", "traces", "crosshair", "planted", "linearizability"):
        report.seconds[step] = 1.0
    return report


def test_top_level_keys_are_kept_and_policies_added() -> None:
    data = report_json(_report())
    assert list(data)[:7] == ["ok", *SECTIONS]
    assert set(data["policies"]) == set(EVICTION_POLICIES)
    for policy, section in data["policies"].items():
        for name in SECTIONS:
            assert section[name].keys() == data[name].keys(), (policy, name)
        assert section["ok"] is True and section["errors"] == []
    assert data["ok"] is True


def test_top_level_summarises_all_policies() -> None:
    data = report_json(_report())
    n = len(EVICTION_POLICIES)
    assert data["trace_validation"]["traces"] == n
    assert data["planted"]["count"] == 2 * n
    assert data["planted"]["caught_by_crosshair"] == n  # the order bugs' crosshair is None
    assert data["planted"]["must_catch"] == {"replay": 2 * n, "traces": 2 * n, "crosshair": n}
    assert len(data["conformance"]["models"]) == n
    assert data["crosshair"]["conditions"] == n
    for section in data["policies"].values():
        assert section["planted"]["count"] == 2 and section["crosshair"]["conditions"] == 1
        assert section["linearizability"]["histories"] == 10
    lin = data["linearizability"]
    assert lin["histories"] == lin["linearizable"] == 10 * n
    assert lin["operations"] == 640 * n and lin["seconds"] == pytest.approx(0.7 * n)
    assert lin["mutants"] == {
        name: {"caught": True, "histories": 3 * n} for name in ("split", "unlocked")
    }
    assert lin["mutants_caught"] == lin["mutants_total"] == 2
    assert data["steps"]["linearizability"] == {"ok": True, "seconds": 1.0}
    assert data["profile"]["name"] == "ci"


def test_a_non_linearizable_history_fails_its_policy_only() -> None:
    report = _report()
    report.linearizability["s3fifo"] = _lin("s3fifo", ok=False)
    data = report_json(report)
    assert step_ok(report, "linearizability") is False and data["ok"] is False
    assert step_ok(report, "linearizability", "s3fifo") is False
    assert step_ok(report, "linearizability", "fifo") is True
    assert data["policies"]["s3fifo"]["ok"] is False and data["policies"]["gdsf"]["ok"] is True
    assert data["linearizability"]["not_linearizable"] == 1
    assert data["policies"]["s3fifo"]["linearizability"]["witness"].startswith("NOT")


def test_a_mismatch_fails_its_policy_and_the_whole_run_only() -> None:
    report = _report(broken="gdsf")
    data = report_json(report)
    assert data["ok"] is False
    assert step_ok(report, "conformance") is False
    assert step_ok(report, "conformance", "gdsf") is False
    assert step_ok(report, "conformance", "fifo") is True
    assert data["policies"]["gdsf"]["ok"] is False and data["policies"]["fifo"]["ok"] is True
    assert data["policies"]["gdsf"]["conformance"]["mismatches"] == 2


def test_a_missed_planted_bug_fails_the_planted_step() -> None:
    report = _report()
    report.planted[0].traces = False
    assert step_ok(report, "planted") is False
    assert step_ok(report, "planted", report.planted[0].policy) is False
    assert step_ok(report, "planted", "s3fifo") is True
    assert all(report.planted[1].link(link) is not False for link in LINKS)


def test_an_error_in_one_policy_fails_that_policy() -> None:
    report = _report()
    report.fail("s3fifo", "traces", "FileNotFoundError: no trace spec")
    data = report_json(report)
    assert step_ok(report, "traces", "s3fifo") is False and step_ok(report, "traces", "fifo")
    assert data["policies"]["s3fifo"]["errors"] == [
        "traces [s3fifo]: FileNotFoundError: no trace spec"
    ]
    assert data["errors"] and data["ok"] is False


def test_a_policy_without_models_of_its_own_fails_tlc() -> None:
    report = _report()
    report.seconds["tlc"] = 1.0
    assert step_ok(report, "tlc", "gdsf") is False  # no TLC result at all


def test_skipped_steps_are_none() -> None:
    report = VerifyReport()
    assert all(step_ok(report, step) is None for step in STEPS)
    assert run_ok(report)  # nothing ran, nothing failed


def test_every_step_is_in_the_table_once_with_one_runner_and_one_verdict() -> None:
    assert tuple(step.name for step in STEP_TABLE) == STEPS
    assert tuple(VERDICTS) == STEPS
    for step in STEP_TABLE:
        assert (step.run_once is None) != (step.run_per_policy is None), step.name


def test_a_step_verdict_comes_from_its_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    report = _report()
    assert step_ok(report, "traces") is True
    monkeypatch.setitem(VERDICTS, "traces", lambda _report, _policy: False)
    assert step_ok(report, "traces") is False and step_ok(report, "traces", "fifo") is False
    assert step_ok(report, "planted") is True  # the other steps keep their own


def test_tlc_runs_the_chosen_policies_models_and_the_shared_ones_only() -> None:
    models = load_manifest(find_tla_dir())
    chosen = tlc_models(models, ["gdsf"])
    names = [m.name for m in chosen]
    assert {m.policy for m in chosen} == {None, "gdsf"}
    assert {"MCCore", "MCGdsf", "MCGdsfRefinesCore", "MCBugGdsfClockStuck"} <= set(names)
    assert "MCSmoke" not in names and "MCBigGdsf" not in names  # fifo's; not default-run
    everything = tlc_models(models, EVICTION_POLICIES)
    assert [m for m in everything if m.default_run] == default_models(models)
    assert [m for m in everything if not m.default_run] == inductive_models(models)
    assert [m.name for m in tlc_models(models, [])] == [
        "MCCore",
        "MCInductiveCore",
        "MCInductiveQuiescenceAlone",
    ]


def test_a_quick_run_of_one_policy_checks_its_own_models_but_the_large_ones() -> None:
    models = load_manifest(find_tla_dir())
    own = {m.name for m in tlc_models(models, ["fifo"], full=False)}
    assert "MCLarge" not in own and "MCLarge" in {m.name for m in tlc_models(models, ["fifo"])}
    assert {"MCSmoke", "MCDeep", "MCFifoRefinesCore", "MCBugFifoHeadInsert"} <= own
    assert {
        "MCLeaseFifo",
        "MCAdmissionFifo",
        "MCContiguityFifo",
        "MCBugContiguityExtraNewest",
    } <= own
    # The core, the protocols, liveness and the shared layers' bug models stand fifo in
    # for any policy: a run of every policy (or --full) checks them.
    shared = {"MCCore", "MCProtocolVllm", "MCLiveness", "MCBugPinAlwaysDecrements"}
    shared |= {"MCBugLeaseExpireAtDeadline", "MCBugAdmissionForgetsDoor"}
    assert not shared & own
    # Of the inductive models, a quick run keeps the policy's own layer's (not its
    # layers' nor a planted one: seconds each, which its 5 minutes cannot spare).
    everything = tlc_models(models, EVICTION_POLICIES)
    assert set(everything) == set(tlc_models(models, EVICTION_POLICIES, full=False)) | {
        m
        for m in everything
        if not own_model(m)
        or LARGE_TAGS & set(m.tags)
        or (m in inductive_models(models) and (layer_of(m) != "policy" or PLANTED in m.tags))
    }
    for policy in EVICTION_POLICIES:  # every policy keeps models of its own
        assert tlc_models(models, [policy], full=False), policy


def test_the_cli_runs_one_policy_quick_unless_full() -> None:
    every = command._options(_args(), CI)
    assert every.full and every.deep
    quick = command._options(_args("--policy", "fifo"), CI)
    assert not quick.full and not quick.deep
    full = command._options(_args("--policy", "fifo", "--full"), CI)
    assert full.full and full.deep
    assert not command._options(_args("--policy", "fifo", "--full", "--no-deep"), CI).deep


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    command.add_parser(parser.add_subparsers())
    return parser.parse_args(["verify", *argv])


def test_cli_rejects_unknown_policies_and_steps(capsys: pytest.CaptureFixture[str]) -> None:
    assert command.run_command(_args("--policy", "lru")) == EXIT_SETUP
    assert "unknown policies ['lru']" in capsys.readouterr().out
    assert command.run_command(_args("--only", "nap")) == EXIT_SETUP


def test_cli_table_has_a_row_per_policy() -> None:
    lines = command._table(_report()).splitlines()
    for policy in EVICTION_POLICIES:
        for step in ("conformance", "planted", "linearizability"):
            assert any(line.split()[:3] == [step, policy, "ok"] for line in lines), (step, policy)
    assert any(line.split()[:2] == ["linearizability", "all"] for line in lines)


# ---------------------------------------------------------------- the linearizability step


def _run_lin(histories: int) -> VerifyReport:
    """The linearizability step alone, for fifo, with a few histories."""
    profile = dataclasses.replace(CI, lin_histories=histories)
    options = VerifyOptions(
        tla_dir=find_tla_dir(), steps=("linearizability",), policies=("fifo",), profile=profile
    )
    return run_verify(options, progress=lambda _: None)


def test_the_linearizability_step_checks_histories_and_catches_every_mutant() -> None:
    report = _run_lin(histories=5)
    assert run_ok(report) and report.seconds["linearizability"] > 0
    section = report_json(report)["policies"]["fifo"]["linearizability"]
    assert section["histories"] == section["linearizable"] == 5
    assert section["operations"] == 5 * 64  # 8 threads x 8 calls
    assert section["ok"] is True and section["seconds"] > 0
    # Non-vacuity: both kinds of mutant (a split operation, a missing lock) are caught.
    assert section["mutants_total"] == len(MUTANTS) >= 2
    assert section["mutants_caught"] == len(MUTANTS)
    assert any(name.startswith("split") for name in section["mutants"])
    assert any(name.startswith("unlocked") for name in section["mutants"])


def test_the_linearizability_step_fails_on_a_cache_that_is_not_linearizable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The "real" cache replaced by a mutant: its histories must not all be linearizable.
    monkeypatch.setattr(lin_report, "_real", MUTANTS["split_alloc"])
    report = _run_lin(histories=20)
    assert step_ok(report, "linearizability") is False and not run_ok(report)
    assert report_json(report)["linearizability"]["not_linearizable"] > 0


def _timed_steps(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, float, float]]:
    """Every CI step replaced by one that sleeps 0.2 s and records (step, thread, start,
    end): the order and overlap of the steps, without running them."""
    ran: list[tuple[str, str, float, float]] = []

    def runner(name: str) -> Step:
        def run(_job: Job) -> None:
            start = time.monotonic()
            time.sleep(0.2)
            ran.append((name, threading.current_thread().name, start, time.monotonic()))

        return Step(name, run_once=run)

    for name in CI_STEPS:
        monkeypatch.setitem(STEP_BY_NAME, name, runner(name))
    return ran


def test_the_lanes_run_beside_each_other_each_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    ran = _timed_steps(monkeypatch)
    options = VerifyOptions(tla_dir=find_tla_dir(), steps=CI_STEPS)
    report = run_verify(options, progress=lambda _: None)
    order = [name for name, *_ in sorted(ran, key=lambda r: r[2])]
    for lane in LANES:
        steps = [s for s in order if s in lane]
        assert steps == list(lane)  # conformance before planted: it dumps planted's graphs
    threads = {name: thread for name, thread, *_ in ran}
    assert len({threads[lane[0]] for lane in LANES}) == 2
    first, second = ({n: (s, e) for n, _t, s, e in ran}[lane[0]] for lane in LANES)
    assert first[0] < second[1] and second[0] < first[1]  # the lanes overlap
    assert report.seconds["total"] < 0.2 * len(CI_STEPS)


def test_sequential_runs_every_step_alone_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    ran = _timed_steps(monkeypatch)
    options = VerifyOptions(tla_dir=find_tla_dir(), steps=CI_STEPS, lanes=False)
    run_verify(options, progress=lambda _: None)
    assert [name for name, *_ in ran] == list(CI_STEPS)
    assert all(a[3] <= b[2] for a, b in itertools.pairwise(ran))
