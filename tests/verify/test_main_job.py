"""The main job's report: one summary of all policies, and the same sections per policy.

Built by hand from fabricated results (no TLC, no CrossHair), so these run in
milliseconds; the job itself runs in CI (``embedding-cache verify``).
"""

from __future__ import annotations

import argparse

import pytest

from embedding_cache.policies import EVICTION_POLICIES
from embedding_cache.tlc.command import EXIT_SETUP
from embedding_cache.verify import command
from embedding_cache.verify.crosshair_check import ConditionResult, CrosshairResult
from embedding_cache.verify.main_job import (
    LINKS,
    PLANS,
    STEPS,
    PlantedResult,
    ReplayRun,
    TraceRun,
    VerifyReport,
)
from embedding_cache.verify.replay import Mismatch, ReplayReport
from embedding_cache.verify.traces import TraceVerdict

#: The sections every policy has, with the top-level's fields.
SECTIONS = ("tlc", "conformance", "trace_validation", "crosshair", "planted")


def _replay(policy: str, model: str, mismatches: int = 0) -> ReplayRun:
    report = ReplayReport(policy=policy, states=10, edges_total=40, edges_replayed=40)
    report.disabled_checked = 7
    report.mismatches = [Mismatch("1", "alloc('k1', 1)", "differs")] * mismatches
    return ReplayRun(policy, model, report, True, 1.0, 2.0)


def _condition(policy: str) -> ConditionResult:
    target = "embedding_cache.transitions.alloc"
    return ConditionResult(policy, "alloc", target, "C", "c", "unrefuted", 3, 1.0, "")


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
    report.crosshair = CrosshairResult(3, 3, 0, tuple(details), 5.0)
    for step in ("conformance", "traces", "crosshair", "planted"):
        report.seconds[step] = 1.0
    return report


def test_top_level_keys_are_kept_and_policies_added() -> None:
    data = _report().to_json()
    assert list(data)[:6] == ["ok", *SECTIONS]
    assert set(data["policies"]) == set(EVICTION_POLICIES)
    for policy, section in data["policies"].items():
        for name in SECTIONS:
            assert section[name].keys() == data[name].keys(), (policy, name)
        assert section["ok"] is True and section["errors"] == []
    assert data["ok"] is True


def test_top_level_summarises_all_policies() -> None:
    data = _report().to_json()
    n = len(EVICTION_POLICIES)
    assert data["trace_validation"]["traces"] == n
    assert data["planted"]["count"] == 2 * n
    assert data["planted"]["caught_by_crosshair"] == n  # the order bugs' crosshair is None
    assert data["planted"]["must_catch"] == {"replay": 2 * n, "traces": 2 * n, "crosshair": n}
    assert len(data["conformance"]["models"]) == n
    assert data["crosshair"]["conditions"] == n
    for section in data["policies"].values():
        assert section["planted"]["count"] == 2 and section["crosshair"]["conditions"] == 1


def test_a_mismatch_fails_its_policy_and_the_whole_run_only() -> None:
    report = _report(broken="gdsf")
    data = report.to_json()
    assert data["ok"] is False
    assert report.step_ok("conformance") is False
    assert report.step_ok("conformance", "gdsf") is False
    assert report.step_ok("conformance", "fifo") is True
    assert data["policies"]["gdsf"]["ok"] is False and data["policies"]["fifo"]["ok"] is True
    assert data["policies"]["gdsf"]["conformance"]["mismatches"] == 2


def test_a_missed_planted_bug_fails_the_planted_step() -> None:
    report = _report()
    report.planted[0].traces = False
    assert report.step_ok("planted") is False
    assert report.step_ok("planted", report.planted[0].policy) is False
    assert report.step_ok("planted", "s3fifo") is True
    assert all(report.planted[1].link(link) is not False for link in LINKS)


def test_an_error_in_one_policy_fails_that_policy() -> None:
    report = _report()
    report.fail("s3fifo", "traces", "FileNotFoundError: no trace spec")
    data = report.to_json()
    assert report.step_ok("traces", "s3fifo") is False and report.step_ok("traces", "fifo")
    assert data["policies"]["s3fifo"]["errors"] == [
        "traces [s3fifo]: FileNotFoundError: no trace spec"
    ]
    assert data["errors"] and data["ok"] is False


def test_a_policy_without_models_of_its_own_fails_tlc() -> None:
    report = _report()
    report.seconds["tlc"] = 1.0
    assert report.step_ok("tlc", "gdsf") is False  # no TLC result at all


def test_skipped_steps_are_none() -> None:
    report = VerifyReport()
    assert all(report.step_ok(step) is None for step in STEPS)
    assert report.ok  # nothing ran, nothing failed


def test_every_policy_has_a_plan_whose_planted_model_it_replays() -> None:
    assert set(PLANS) == set(EVICTION_POLICIES)
    for plan in PLANS.values():
        assert plan.planted in (*plan.full_replay, *plan.bounded_replay)


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    command.add_parser(parser.add_subparsers())
    return parser.parse_args(["verify", *argv])


def test_cli_rejects_unknown_policies_and_steps(capsys: pytest.CaptureFixture[str]) -> None:
    assert command.run_command(_args("--policy", "lru")) == EXIT_SETUP
    assert "unknown policies ['lru']" in capsys.readouterr().out
    assert command.run_command(_args("--only", "nap")) == EXIT_SETUP


def test_cli_table_has_a_row_per_policy() -> None:
    table = command._table(_report())
    for policy in EVICTION_POLICIES:
        assert f"conformance  {policy}" in table and f"planted      {policy}" in table


def test_cli_policy_defaults_to_every_policy() -> None:
    assert _args().policy.split(",") == list(EVICTION_POLICIES)
