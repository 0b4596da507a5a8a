"""The main job's tier (tests/main_job_tier.py) stays what README.md says it is: tests
that run a main-job step's check, marked ``main_job``, never a fast-tier test, and run
by CI after the README's test command."""

from __future__ import annotations

from fast_tier import fast_ids
from main_job_tier import MAIN_JOB_TIER, MODEL_CHECK, in_main_job_tier
from main_job_tier import REPLAY as REPLAY_FILE
from pytest_child import ROOT, collected

from embedding_cache_checker.verify.step_names import STEPS

REPLAY = f"{REPLAY_FILE}::test_each_policy_replays_its_model_on_the_real_code"


def test_each_entry_names_a_step_of_the_main_job() -> None:
    assert MAIN_JOB_TIER and set(MAIN_JOB_TIER.values()) <= set(STEPS)


def test_an_entry_names_a_test_and_its_parametrisations_but_not_the_fast_tiers() -> None:
    models = MODEL_CHECK
    assert in_main_job_tier(f"{models}[MCLarge]")
    assert not in_main_job_tier(f"{models}[MCSmoke]")  # the fast tier's: kept in the command
    assert not in_main_job_tier(f"{models}[MCBugContiguityOneTooMany]")  # a bug model: kept
    assert not in_main_job_tier(f"{models}_again[MCLarge]")
    assert in_main_job_tier(f"{REPLAY}[sieve]") and in_main_job_tier(REPLAY)
    assert not in_main_job_tier(f"{REPLAY_FILE}::test_smoke_graph_is_the_expected_model")
    assert not any(in_main_job_tier(i) for i in fast_ids())


def test_the_marker_splits_the_files_and_keeps_the_fast_tier_in_the_command() -> None:
    """``-m main_job`` collects every entry, and nothing else; ``-m "not main_job"`` keeps
    the fast tier's TLC models and MCSmoke's replay (a renamed test or parameter fails
    here, not silently in CI)."""
    files = sorted({i.split("::")[0] for i in MAIN_JOB_TIER})
    tier = collected("-m", "main_job", *files)
    for entry in MAIN_JOB_TIER:
        assert any(c.startswith(entry + "[") or c == entry for c in tier), entry
    assert all(in_main_job_tier(c) for c in tier)
    rest = collected("-m", "not main_job", *files)
    assert rest and not any(in_main_job_tier(c) for c in rest)
    fast_models = [i for i in fast_ids() if i.startswith(MODEL_CHECK)]
    assert fast_models and set(fast_models) <= set(rest)
    assert any("[MCBug" in c for c in rest)  # the bug models stay in the command


def test_ci_runs_the_command_and_then_the_tier() -> None:
    """CI checks a commit as before the split: the README's test command, then the tier."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = ci.index('-m "not main_job"')
    assert ci.index("-m main_job", command) > command
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert '-m "not main_job"' in readme and "-m main_job" in readme
