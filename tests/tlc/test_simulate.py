"""Simulation: derived production-shape configs, and a defect caught in budget."""

from __future__ import annotations

import os
import shutil

import pytest

from embedding_cache.tlc.config import parse_config
from embedding_cache.tlc.manifest import find_tla_dir, load_manifest
from embedding_cache.tlc.simulate import (
    PRODUCTION,
    Shape,
    run_simulation,
    scale_config,
    simulation_models,
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
    scaled = parse_config(scale_config(CONFIG, PRODUCTION))
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


def test_one_simulation_per_policy_and_per_bug_model() -> None:
    sims = {s.name: s.base.name for s in simulation_models(MODELS)}
    for policy_sim in ("MCSimFifo", "MCSimGdsf", "MCSimS3Fifo"):
        assert policy_sim in sims
    bugs = [m.name for m in MODELS if "bug" in m.tags]
    assert bugs and all(f"MCSim{b[2:]}" in sims for b in bugs)


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
def test_simulation_of_a_correct_model_passes_and_counts_its_work() -> None:
    base = BY_NAME["MCSmoke"]
    small = Shape(keys=2, blocks=3, max_pins=2, level="blocks")
    result = run_simulation(base, TLA_DIR, depth=20, seconds=6, seed=1, shape=small)
    assert result.result == "pass", result.note
    assert result.ok and result.traces >= 1 and result.states > 0
    data = result.to_json()
    assert data["traces"] == result.traces and data["seeds"]
