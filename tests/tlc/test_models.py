"""Run the smoke model and every bug model through the CLI's runner (needs java)."""

from __future__ import annotations

import os
import shutil

import pytest

from embedding_cache_checker.tlc.jar import locate_jar, locate_java
from embedding_cache_checker.tlc.manifest import Model, find_tla_dir, load_manifest
from embedding_cache_checker.tlc.runner import run_model

pytestmark = [
    pytest.mark.tlc,
    pytest.mark.skipif(
        shutil.which("java") is None and "JAVA_HOME" not in os.environ, reason="TLC needs java"
    ),
]

TLA_DIR = find_tla_dir()
MODELS = load_manifest(TLA_DIR)
#: The models pytest runs: the smoke model and every bug model (deep, large,
#: refinement and liveness run in CI through the CLI).
FAST = [m for m in MODELS if "smoke" in m.tags or "bug" in m.tags]


@pytest.mark.parametrize("model", FAST, ids=[m.name for m in FAST])
def test_model_meets_expectation(model: Model) -> None:
    result = run_model(model, TLA_DIR, locate_java(), locate_jar(), workers=os.cpu_count() or 1)
    assert result.result == model.expect, result.raw_output[-3000:]
    assert result.ok, result.note
    if model.expect != "pass":
        assert result.output.trace, "a violation must come with a counterexample"
