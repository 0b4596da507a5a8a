"""Profiles of the main job: ci is today's job plus linearizability; nightly goes further.

Plumbing only (what each profile asks for, how the command line picks and
overrides it, which steps run): the profiles' long runs are not run here.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pytest
from hypothesis import settings

from embedding_cache_checker.tlc.command import EXIT_SETUP
from embedding_cache_checker.tlc.manifest import find_tla_dir
from embedding_cache_checker.verify import command
from embedding_cache_checker.verify.crosshair_budget import PER_CONDITION_SECONDS, paths_for
from embedding_cache_checker.verify.lin.report import MUTANT_BUDGET
from embedding_cache_checker.verify.main_job import (
    CI_STEPS,
    EXTRA_STEPS,
    STEPS,
    VerifyOptions,
)
from embedding_cache_checker.verify.profile import CI, NIGHTLY, PROFILES, get_profile
from embedding_cache_checker.verify.step_models import config_depth


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    command.add_parser(parser.add_subparsers())
    return parser.parse_args(["verify", *argv])


def test_ci_is_the_old_job_plus_linearizability() -> None:
    assert CI_STEPS == ("tlc", "conformance", "traces", "crosshair", "planted", "linearizability")
    assert CI.extra_steps == ()
    # Every budget of the old job is left to the step's own default, but CrossHair's:
    # the clean check runs at the tests' 15 paths per condition (the 15-minute budget).
    assert CI.replay_depth is None and CI.crosshair_timeout is not None
    assert paths_for(CI.crosshair_timeout) == 15 < paths_for(PER_CONDITION_SECONDS)
    assert CI.hypothesis_profile is None and CI.json_out is None
    assert CI.simulate_seconds == 0 and CI.distributed_workers == 0
    assert CI.lin_histories == 200 and CI.lin_mutant_budget == MUTANT_BUDGET
    options = VerifyOptions(tla_dir=Path("tla"))
    assert options.profile is CI and options.selected_steps == CI_STEPS


def test_nightly_goes_further_everywhere() -> None:
    tla_dir = find_tla_dir()
    assert NIGHTLY.extra_steps == EXTRA_STEPS
    assert STEPS == CI_STEPS + EXTRA_STEPS
    deep_bound = config_depth(tla_dir, "MCReplayDeep")
    assert deep_bound is not None
    assert NIGHTLY.replay_depth is not None and NIGHTLY.replay_depth > deep_bound
    assert NIGHTLY.crosshair_timeout is not None
    assert NIGHTLY.crosshair_timeout >= 4 * PER_CONDITION_SECONDS
    assert NIGHTLY.lin_histories >= 5 * CI.lin_histories
    assert NIGHTLY.simulate_seconds > 0 and NIGHTLY.simulate_bugs
    assert NIGHTLY.distributed_workers == 2
    assert NIGHTLY.json_out == "verify-nightly.json"
    # The Hypothesis profile it names is one tests/conftest.py registers.
    assert NIGHTLY.hypothesis_profile is not None
    assert settings.get_profile(NIGHTLY.hypothesis_profile).max_examples > settings().max_examples
    options = VerifyOptions(tla_dir=tla_dir, profile=NIGHTLY, steps=("planted", "simulate"))
    assert options.selected_steps == ("planted", "simulate")  # in the job's order


def test_profiles_by_name() -> None:
    assert set(PROFILES) == {"ci", "nightly"}
    assert get_profile("nightly") is NIGHTLY
    with pytest.raises(KeyError, match="unknown profile 'weekly'"):
        get_profile("weekly")
    assert NIGHTLY.to_json()["replay_depth"] == NIGHTLY.replay_depth
    assert set(CI.to_json()) == {f.name for f in dataclasses.fields(CI)} - {"json_out"}


def test_cli_picks_the_profile_and_its_overrides() -> None:
    assert command._profile(_args()) is CI
    assert command._profile(_args("--profile", "nightly")) is NIGHTLY
    three = command._profile(_args("--profile", "nightly", "--distributed", "3"))
    assert three.distributed_workers == 3 and three.replay_depth == NIGHTLY.replay_depth
    with pytest.raises(SystemExit):
        _args("--profile", "weekly")


def test_cli_refuses_a_step_the_profile_does_not_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert command.run_command(_args("--only", "simulate")) == EXIT_SETUP
    assert "the ci profile does not run ['simulate']" in capsys.readouterr().out
