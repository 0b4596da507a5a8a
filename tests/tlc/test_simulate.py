"""Simulation: derived production-shape configs, and a defect caught in budget."""

from __future__ import annotations

import dataclasses
import os
import shutil

import pytest

from embedding_cache import EVICTION_POLICIES
from embedding_cache.policies import make_policy
from embedding_cache_checker.tlc.config import parse_config, read_config
from embedding_cache_checker.tlc.manifest import (
    PASS,
    ManifestError,
    find_tla_dir,
    load_manifest,
    main_models,
)
from embedding_cache_checker.tlc.shapes import PRODUCTION, Shape, scale_config, simulation_plan
from embedding_cache_checker.tlc.simulate import (
    is_simulated_bug,
    policy_bases,
    run_simulation,
    simulate_bug_models,
    simulation_models,
)
from embedding_cache_checker.verify.model_code import (
    check_constants,
    derived_constants,
    policy_factory,
)

TLA_DIR = find_tla_dir()
MODELS = load_manifest(TLA_DIR)
BY_NAME = {m.name: m for m in MODELS}

needs_java = pytest.mark.skipif(
    shutil.which("java") is None and "JAVA_HOME" not in os.environ, reason="TLC needs java"
)

CONFIG = """\\* a bug model
CONSTANTS
    Keys = {k1, k2, k3}
    N = 3
    MaxPins = 2
    Level = "blocks"
    SmallTarget = 1
    GhostCapacity = 2
    Enough <- EnoughOneTooMany

SPECIFICATION CheckSpec
VIEW GhostView
SYMMETRY KeySymmetry

INVARIANTS
    TypeOK
PROPERTIES
    EvictOnlyAsNeededProp
"""


def test_scale_config_rewrites_sizes_and_keeps_the_checks() -> None:
    scaled = parse_config(scale_config(CONFIG, PRODUCTION, "s3fifo"))
    assert scaled.constants["N"] == "64"
    assert scaled.constants["MaxPins"] == "4"
    assert scaled.constants["Level"] == '"counts"'
    assert scaled.constants["Keys"].count("k") == 16
    assert scaled.constants["SmallTarget"] == "6"
    assert scaled.constants["GhostCapacity"] == "58"
    assert scaled.constants["Enough"] == "<- EnoughOneTooMany"  # the defect carries over
    assert scaled.invariants == ["TypeOK"]
    assert scaled.properties == ["EvictOnlyAsNeededProp"]
    text = scale_config(CONFIG)
    assert "VIEW" not in text and "SYMMETRY" not in text


def test_scale_config_only_touches_what_the_config_assigns() -> None:
    text = scale_config("CONSTANTS\n    N = 3\n", Shape(keys=2, blocks=8))
    assert parse_config(text).constants == {"N": "8"}
    # The core's config keeps a policy-looking constant: no policy derives it.
    text = scale_config("CONSTANTS\n    N = 3\n    SmallTarget = 1\n", PRODUCTION)
    assert parse_config(text).constants["SmallTarget"] == "1"


@pytest.mark.parametrize("policy", sorted(EVICTION_POLICIES))
def test_a_scaled_config_agrees_with_the_code_policy_at_its_size(policy: str) -> None:
    """Every model of every policy, scaled: its constants are the code's policy's at the
    scaled pool (the derived ones rewritten, the constructor parameters kept)."""
    for model in (m for m in MODELS if m.policy == policy):
        text = (TLA_DIR / model.config).read_text(encoding="utf-8")
        scaled = parse_config(scale_config(text, PRODUCTION, policy)).constants
        given = {k: int(v) for k, v in scaled.items() if v.isdigit()}
        factory = policy_factory(policy, given)
        code = make_policy(factory, PRODUCTION.blocks)
        assert check_constants(code, scaled) is None, model.name
        # Non-vacuity where the policy derives a constant: the small model's value moved.
        original = parse_config(text).constants
        for name in derived_constants(policy, original, PRODUCTION.blocks):
            assert scaled[name] != original[name], (model.name, name)


def test_one_simulation_per_policy_and_per_safety_bug_model() -> None:
    sims = {s.name: s.base.name for s in simulation_models(MODELS)}
    mains = [BY_NAME[base] for base in sims.values() if not is_simulated_bug(BY_NAME[base])]
    assert sorted(m.policy or "" for m in mains) == sorted(EVICTION_POLICIES)  # one each
    bugs = [m.name for m in MODELS if "bug" in m.tags and "liveness" not in m.tags]
    assert len(bugs) >= 17 and all(f"MCSim{b[2:]}" in sims for b in bugs)
    # liveness defects need fairness over infinite behaviours: not simulated
    assert not any(name.startswith("MCSimLiveness") for name in sims)


def test_each_registered_policy_has_one_main_model() -> None:
    """The main model (tag ``main``) of every policy of the registry: a block-level,
    default-run check that must pass, and the base of the policy's simulation."""
    mains = main_models(MODELS)
    assert set(mains) == set(EVICTION_POLICIES)
    for policy, main in mains.items():
        assert main.policy == policy and main.expect == PASS and main.default_run
        assert read_config(TLA_DIR / main.config).constants["Level"] == '"blocks"'
    assert policy_bases(MODELS) == {p: m.name for p, m in mains.items()}


def test_two_main_models_of_one_policy_are_refused() -> None:
    main = next(iter(main_models(MODELS).values()))
    twin = dataclasses.replace(main, name=f"{main.name}Twin")
    with pytest.raises(ManifestError, match="two main models"):
        main_models([*MODELS, twin])
    with pytest.raises(ManifestError, match="no policy"):
        main_models([dataclasses.replace(main, policy=None)])


def test_policies_main_models_keep_the_production_shape() -> None:
    for main in main_models(MODELS).values():
        assert simulation_plan(main).shape == PRODUCTION
        assert simulation_plan(main).depth == 200
    assert simulation_plan(BY_NAME["MCBugDiscardKeepsBlocks"]).shape == PRODUCTION


#: The models whose manifest entry sets a simulation shape.
PLANNED = {m.name: simulation_plan(m) for m in MODELS if m.simulation}


def test_every_bug_plan_is_a_smaller_shape_with_a_reason() -> None:
    assert PLANNED
    for name, plan in PLANNED.items():
        assert is_simulated_bug(BY_NAME[name]), name
        assert plan.shape != PRODUCTION and plan.why, name
        assert plan.shape.keys < PRODUCTION.keys and plan.shape.blocks < PRODUCTION.blocks
    sims = {s.base.name: s for s in simulation_models(MODELS)}
    assert sims["MCBugUnpinDoubleAppend"].plan == PLANNED["MCBugUnpinDoubleAppend"]


@pytest.mark.parametrize(
    ("simulation", "message"),
    [
        ({"keys": 8}, "must say why"),
        ({"keys": 8, "because": "x"}, "unknown simulation field"),
        ({"keys": "8", "why": "x"}, "bad simulation entry"),
        ({"level": "bits", "why": "x"}, "bad simulation entry"),
    ],
)
def test_a_bad_simulation_entry_is_named(simulation: dict[str, object], message: str) -> None:
    model = dataclasses.replace(
        BY_NAME["MCBugDiscardKeepsBlocks"], simulation=tuple(simulation.items())
    )
    with pytest.raises(ManifestError, match=f"MCBugDiscardKeepsBlocks: .*{message}"):
        simulation_plan(model)


@pytest.mark.tlc
@needs_java
def test_simulation_catches_a_defect_within_its_budget() -> None:
    base = BY_NAME["MCBugDiscardKeepsBlocks"]
    result = run_simulation(base, TLA_DIR, depth=200, seconds=60, seed=1)
    assert result.result == base.expect, result.raw_output[-2000:]
    assert result.ok and result.output is not None and result.output.trace
    assert result.to_json()["mode"] == "simulate"


@pytest.mark.tlc
@needs_java
def test_simulation_catches_bug_models_that_need_a_rare_interleaving() -> None:
    # MCBugUnpinDoubleAppend (pin, pin, unpin of one entry) and
    # MCBugS3FifoHoldSmallOnly (a pin of a promoted entry) were missed in 60 s
    # at production shape; at their plan's shape each is found in seconds.
    names = ["MCBugUnpinDoubleAppend", "MCBugS3FifoHoldSmallOnly"]
    results = simulate_bug_models(MODELS, TLA_DIR, seconds=60, names=names)
    assert [r.base.name for r in results] == names
    for result in results:
        assert result.result == result.base.expect, (result.name, result.note)
        assert result.ok and result.output is not None and result.output.trace
        assert result.shape == PLANNED[result.base.name].shape
        assert result.seconds_to_violation is not None and result.seconds_to_violation < 60
        assert result.to_json()["why_shape"]


def test_bug_models_that_need_block_ids_are_simulated_at_block_level() -> None:
    # Contiguity ASSUMEs the block level (a run needs ids): scaled to the counts level
    # its bug models would end in an error, not in their violation.
    needing = [m for m in MODELS if is_simulated_bug(m) and "contiguity" in m.tags]
    assert needing
    for model in needing:
        assert simulation_plan(model).shape.level == "blocks", model.name


@pytest.mark.tlc
@needs_java
def test_simulation_catches_the_block_level_bug_models() -> None:
    names = [m.name for m in MODELS if is_simulated_bug(m) and "contiguity" in m.tags]
    results = simulate_bug_models(MODELS, TLA_DIR, seconds=60, names=names)
    assert sorted(r.base.name for r in results) == sorted(names)
    for result in results:
        assert result.ok and result.result == result.base.expect, (result.name, result.note)


@pytest.mark.tlc
@needs_java
def test_simulation_of_a_correct_model_passes_and_counts_its_work() -> None:
    base = BY_NAME["MCSmoke"]
    small = Shape(keys=2, blocks=3, max_pins=2, level="blocks")
    # 20 s, not less: on a loaded 2-core machine (load 7) TLC's start and parse alone took
    # more than 6 s, and a budget spent before one behaviour ends is rightly no pass.
    result = run_simulation(base, TLA_DIR, depth=20, seconds=20, seed=1, shape=small)
    assert result.result == "pass", result.note
    assert result.ok and result.traces >= 1 and result.states > 0
    data = result.to_json()
    assert data["traces"] == result.traces and data["seeds"]
