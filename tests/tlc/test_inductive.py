"""The inductive models (``tlc --inductive``; spec/SPEC.md section 15): each layer's
invariants are inductive at small bounds, and a planted non-inductive invariant is
caught. The core's two run here (seconds); each policy's four layers are the main
job's tier (tests/main_job_tier.py: ``verify`` runs them too)."""

from __future__ import annotations

import argparse
import os
import shutil

import pytest
from cores import tlc_workers

from embedding_cache import EVICTION_POLICIES
from embedding_cache_checker.tlc.command import EXIT_SETUP, run_command
from embedding_cache_checker.tlc.config import read_config
from embedding_cache_checker.tlc.inductive import (
    INDUCTIVE_TAG,
    PLANTED,
    inductive_models,
    inductive_table,
    layer_of,
)
from embedding_cache_checker.tlc.jar import locate_jar, locate_java
from embedding_cache_checker.tlc.manifest import Model, default_models
from embedding_cache_checker.tlc.runner import ModelResult, run_model
from embedding_cache_checker.verify.step_models import tlc_models
from embedding_cache_checker.verify.tlc_steps import big_models
from tlc.repro_models import MODELS, TLA_DIR

needs_java = pytest.mark.skipif(
    shutil.which("java") is None and "JAVA_HOME" not in os.environ, reason="TLC needs java"
)

#: Every layer a policy's invariants are shown inductive in (``layer_of``).
LAYERS = {"policy", "lease", "admission", "contiguity", "combined"}
#: Each policy's inductive models (the main job's tier runs them).
POLICY_MODELS = [m for m in inductive_models(MODELS) if m.policy is not None]


def _by_name(name: str) -> Model:
    return next(m for m in MODELS if m.name == name)


def _run(model: Model) -> ModelResult:
    return run_model(model, TLA_DIR, locate_java(), locate_jar(), workers=tlc_workers())


def test_every_policy_has_one_inductive_model_per_layer_and_the_core_two() -> None:
    for policy in EVICTION_POLICIES:
        mine = [m for m in POLICY_MODELS if m.policy == policy and PLANTED not in m.tags]
        assert sorted(layer_of(m) for m in mine) == sorted(LAYERS), policy
    core = [m for m in inductive_models(MODELS) if m.policy is None]
    assert {m.name: m.expect for m in core} == {
        "MCInductiveCore": "pass",
        "MCInductiveQuiescenceAlone": "QuiescenceInv",
    }


def test_each_inductive_model_starts_from_typeok_and_every_invariant_it_checks() -> None:
    """Init is TypeOK /\\ Inv with Inv the config's INVARIANTS (the family writes the
    conjunction from the list), and a step leaves no successor (no deadlock check)."""
    for model in inductive_models(MODELS):
        assert not model.check_deadlock and not model.default_run, model.name
        invariants = read_config(TLA_DIR / model.config).invariants
        assert invariants[0] == "TypeOK" or model.expect in invariants, model.name
        if model.policy is not None:
            root = (TLA_DIR / model.spec).read_text(encoding="utf-8")
            assert " /\\ ".join(invariants) in root, model.name


def test_verify_policy_runs_its_own_inductive_model_and_the_full_run_every_layers() -> None:
    quick = {m.name for m in tlc_models(MODELS, ["fifo"], full=False)}
    assert {m.name for m in inductive_models(MODELS) if m.name in quick} == {"MCInductiveFifo"}
    assert "MCInductiveFifoNoLemma" in {m.name for m in tlc_models(MODELS, ["fifo"], full=True)}
    full = {m.name for m in tlc_models(MODELS, ["gdsf"], full=True)}
    assert {"MCInductiveCore", "MCInductiveQuiescenceAlone", "MCInductiveGdsf"} <= full
    assert {"MCInductiveLeaseGdsf", "MCInductiveContiguityGdsf"} <= full
    assert "MCInductiveFifo" not in full
    assert not {m.name for m in big_models(MODELS)} & {m.name for m in inductive_models(MODELS)}
    assert not set(default_models(MODELS)) & set(inductive_models(MODELS))


def test_inductive_names_an_unknown_policy_before_running_anything(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = argparse.Namespace(
        tla_dir=None, models=[], engine_trace=None, inductive="nosuch", list=False
    )
    assert run_command(args) == EXIT_SETUP
    assert "no policy 'nosuch'" in capsys.readouterr().err


@pytest.mark.tlc
@needs_java
def test_the_cores_invariants_are_inductive() -> None:
    result = _run(_by_name("MCInductiveCore"))
    assert result.ok, result.raw_output[-3000:]
    assert result.output.initial_states and result.output.initial_states > 100
    assert result.output.depth == 2  # the initial states and one step
    assert "MCInductiveCore" in inductive_table([result])


@pytest.mark.tlc
@needs_java
def test_a_planted_non_inductive_invariant_is_caught() -> None:
    """QuiescenceInv holds on every reachable state (MCCore checks it), yet alone it is
    not inductive: from a state that breaks BlockConservationInv or EvictableCountInv
    one step breaks it. The check must say so, with that one step."""
    assert "QuiescenceInv" in read_config(TLA_DIR / _by_name("MCCore").config).invariants
    result = _run(_by_name("MCInductiveQuiescenceAlone"))
    assert result.result == "QuiescenceInv" and result.ok, result.raw_output[-3000:]
    assert len(result.output.trace) == 2, "an initial state of the invariant, and one step"
    assert result.output.trace[0].state["stepped"] == "FALSE"


@pytest.mark.tlc
@needs_java
@pytest.mark.parametrize("model", POLICY_MODELS, ids=[m.name for m in POLICY_MODELS])
def test_each_policy_layer_is_inductive(model: Model) -> None:
    """Each passes, but a planted one (fifo's order property without its lemma
    QueueStampOrderInv), which must report its property violated after one step."""
    assert INDUCTIVE_TAG in model.tags
    result = _run(model)
    assert result.ok, result.raw_output[-3000:]
    assert (model.expect == "pass") == (PLANTED not in model.tags)
    assert result.output.initial_states, "every state of TypeOK /\\ Inv is an initial state"
