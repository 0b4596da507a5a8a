"""Run every model of the default run through the CLI's runner (needs java): what
``embedding-cache tlc`` runs, each against its expectation."""

from __future__ import annotations

import os
import shutil

import pytest

from embedding_cache_checker.tlc.jar import locate_jar, locate_java
from embedding_cache_checker.tlc.manifest import Model, default_models, find_tla_dir, load_manifest
from embedding_cache_checker.tlc.runner import run_model

pytestmark = [
    pytest.mark.tlc,
    pytest.mark.skipif(
        shutil.which("java") is None and "JAVA_HOME" not in os.environ, reason="TLC needs java"
    ),
]

TLA_DIR = find_tla_dir()
MODELS = load_manifest(TLA_DIR)
#: The models pytest runs: the manifest's default run (the passing, refinement, liveness,
#: lease and protocol models and every bug model), as ``embedding-cache tlc`` does; the
#: big ones (``default_run`` false) are the nightly profile's.
FAST = default_models(MODELS)


@pytest.mark.parametrize("model", FAST, ids=[m.name for m in FAST])
def test_model_meets_expectation(model: Model) -> None:
    result = run_model(model, TLA_DIR, locate_java(), locate_jar(), workers=os.cpu_count() or 1)
    assert result.result == model.expect, result.raw_output[-3000:]
    assert result.ok, result.note
    if model.expect != "pass":
        assert result.output.trace, "a violation must come with a counterexample"
