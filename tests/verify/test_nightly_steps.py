"""The nightly profile's steps, on small inputs: the config override of the deep replay,
the pytest step's counts, and which models the simulation and distributed steps pick.

The steps' long runs (minutes to an hour) are not run here; the figures of a
nightly run are in docs/MEASURED.md.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from embedding_cache import EVICTION_POLICIES
from embedding_cache_checker.tlc.config import read_config
from embedding_cache_checker.tlc.manifest import Model, find_tla_dir, load_manifest
from embedding_cache_checker.tlc.simulate import (
    PRODUCTION,
    SimulationResult,
    is_simulated_bug,
    policy_bases,
)
from embedding_cache_checker.verify.config_override import assign_constants, overridden_tla_dir
from embedding_cache_checker.verify.graph_dump import model_files
from embedding_cache_checker.verify.main_job import (
    VerifyOptions,
    VerifyReport,
    run_verify,
)
from embedding_cache_checker.verify.profile import NIGHTLY
from embedding_cache_checker.verify.pytest_run import junit_counts, run_pytest
from embedding_cache_checker.verify.report_json import report_json
from embedding_cache_checker.verify.step_models import config_depth
from embedding_cache_checker.verify.tlc_steps import big_models, bug_model_names, policy_simulations
from embedding_cache_checker.verify.verdicts import run_ok, step_ok

# ---------------------------------------------------------------- the deep replay's cut

CONFIG = """\\* a replay model
CONSTANTS
    Keys = {k1, k2}
    N = 6
    ReplayDepth = 4
    Op <- BuggyOp

SPECIFICATION CacheSpec
CONSTRAINT DepthConstraint
"""


def test_assign_constants_rewrites_only_the_named_assignment() -> None:
    text = assign_constants(CONFIG, {"ReplayDepth": "5"})
    assert text == CONFIG.replace("ReplayDepth = 4", "ReplayDepth = 5")
    with pytest.raises(ValueError, match="no constant \\['Op'\\]"):
        assign_constants(CONFIG, {"Op": "Other"})  # an override is not an assignment
    with pytest.raises(ValueError, match="MaxPins"):
        assign_constants(CONFIG, {"MaxPins": "3"})


def test_the_override_is_a_copy_and_the_source_is_untouched() -> None:
    tla_dir = find_tla_dir()
    spec, config = model_files(tla_dir, "MCReplayDeep")
    before = (tla_dir / config).read_text(encoding="utf-8")
    with overridden_tla_dir(tla_dir, "MCReplayDeep", {"ReplayDepth": "7"}) as copy:
        assert copy != tla_dir and config_depth(copy, "MCReplayDeep") == 7
        assert read_config(copy / config).constants["N"] == "6"
        assert (copy / spec).is_file() and (copy / "models.json").is_file()
        assert load_manifest(copy) == load_manifest(tla_dir)
    assert not copy.exists()
    assert (tla_dir / config).read_text(encoding="utf-8") == before
    assert config_depth(tla_dir, "MCReplayDeep") == 4
    assert config_depth(tla_dir, "MCSmoke") is None


# ---------------------------------------------------------------- the pytest step

TESTS = """
def test_one():
    assert True

def test_two():
    assert True

def test_broken():
    assert False, "planted"
"""

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="2" skipped="3" tests="10"/>
</testsuites>"""


def test_junit_counts(tmp_path: Path) -> None:
    (tmp_path / "junit.xml").write_text(JUNIT, encoding="utf-8")
    assert junit_counts(tmp_path / "junit.xml") == {
        "tests": 10,
        "failures": 2,
        "errors": 1,
        "skipped": 3,
    }
    assert junit_counts(tmp_path / "absent.xml")["tests"] == 0


def test_the_pytest_step_counts_passed_and_failed(tmp_path: Path) -> None:
    (tmp_path / "test_small.py").write_text(TESTS, encoding="utf-8")
    run = run_pytest("test_small.py", tmp_path, "thorough")
    assert (run.passed, run.failed, run.errors) == (2, 1, 0)
    assert run.exit_code == 1 and not run.ok  # one failing test fails the step
    assert "planted" in run.tail
    assert run.to_json()["hypothesis_profile"] == "thorough" and "tail" in run.to_json()
    passing = dataclasses.replace(run, failed=0, exit_code=0)
    assert passing.ok and "tail" not in passing.to_json()
    assert not dataclasses.replace(passing, passed=0).ok  # nothing ran: no evidence
    assert not dataclasses.replace(passing, exit_code=None).ok  # killed at the timeout
    with pytest.raises(FileNotFoundError):
        run_pytest("test_absent.py", tmp_path, "ci")


# ---------------------------------------------------------------- simulation, big models


def test_each_policy_simulates_its_main_model_and_the_bugs_of_its_own() -> None:
    models = load_manifest(find_tla_dir())
    sims = policy_simulations(models, ["fifo", "s3fifo"])
    assert sorted(s.base.name for s in sims) == sorted(
        [policy_bases(models)["fifo"], policy_bases(models)["s3fifo"]]
    )
    bugs = [m for m in models if m.name in bug_model_names(models, ["gdsf"])]
    assert bugs and all(is_simulated_bug(m) for m in bugs)
    assert "gdsf" in {m.policy for m in bugs} <= {None, "gdsf"}  # the core's and gdsf's own
    # Every policy of the registry: the simulated bug models are exactly the manifest's.
    everyone = bug_model_names(models, list(EVICTION_POLICIES))
    assert len(everyone) == sum(is_simulated_bug(m) for m in models)


def _model(name: str, default_run: bool) -> Model:
    return Model(
        name, f"{name}.tla", f"{name}.cfg", "pass", 60, "", "", True, (), "fifo", (), default_run
    )


def test_big_models_are_those_left_out_of_the_default_run() -> None:
    models = [_model("MCSmall", True), _model("MCBig", False)]
    assert [m.name for m in big_models(models)] == ["MCBig"]
    assert big_models([_model("MCSmall", True)]) == []


def test_the_distributed_step_holds_with_no_big_model(monkeypatch: pytest.MonkeyPatch) -> None:
    # A manifest without big models: the step runs nothing and does not fail.
    monkeypatch.setattr(
        "embedding_cache_checker.verify.step_nightly.load_manifest",
        lambda _: [_model("MCSmall", True)],
    )
    options = VerifyOptions(
        tla_dir=find_tla_dir(), steps=("distributed",), profile=dataclasses.replace(NIGHTLY)
    )
    messages: list[str] = []
    report = run_verify(options, progress=messages.append)
    assert step_ok(report, "distributed") is True and run_ok(report)
    assert report_json(report)["distributed"] == {"ok": True, "workers": 2, "models": []}
    assert any("no big model" in m for m in messages)


def _simulation(policy: str, traces: int, result: str = "pass") -> SimulationResult:
    base = dataclasses.replace(_model(f"MC{policy}", True), policy=policy)
    return SimulationResult(
        f"MCSim{policy}", base, PRODUCTION, 200, 10.0, result, result == "pass", 10.0, traces, 0
    )


def test_a_simulation_that_finished_no_trace_fails_the_step() -> None:
    report = VerifyReport(policies=("fifo", "gdsf"))
    report.seconds["simulate"] = 20.0
    report.simulations = [_simulation("fifo", traces=12), _simulation("gdsf", traces=0)]
    assert step_ok(report, "simulate", "fifo") is True
    assert step_ok(report, "simulate", "gdsf") is False  # nothing was simulated
    assert step_ok(report, "simulate") is False and not run_ok(report)
    section = report_json(report)["policies"]["gdsf"]["simulate"]
    assert section["ok"] is False and section["models"][0]["ok"] is False
    report.simulations[1] = _simulation("gdsf", traces=0, result="SomeInv")
    assert step_ok(report, "simulate", "gdsf") is False  # a pass model must pass
