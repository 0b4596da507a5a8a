"""Run every model of the default run through the CLI's runner (needs java): what
``embedding-cache tlc`` runs, each against its expectation."""

from __future__ import annotations

import os
import shutil

import pytest
from cores import tlc_workers

from embedding_cache_checker.tlc.jar import locate_jar, locate_java
from embedding_cache_checker.tlc.manifest import Model, default_models
from embedding_cache_checker.tlc.runner import run_model
from tlc.repro_models import BUG_MODELS, MODELS, TLA_DIR

pytestmark = [
    pytest.mark.tlc,
    pytest.mark.skipif(
        shutil.which("java") is None and "JAVA_HOME" not in os.environ, reason="TLC needs java"
    ),
]

#: The models pytest runs here: the manifest's default run (the passing, refinement,
#: liveness, lease, admission and protocol models and the bug models), as
#: ``embedding-cache tlc`` does, but for the bug models test_repro.py runs TLC on
#: (``repro_models.BUG_MODELS``, each against its expectation there); the big ones
#: (``default_run`` false) are the nightly profile's.
FAST = [m for m in default_models(MODELS) if m.name not in {b.name for b in BUG_MODELS}]


def test_every_default_model_is_checked_here_or_by_repro() -> None:
    here = {m.name for m in FAST}
    repro = {m.name for m in BUG_MODELS}
    assert here | repro == {m.name for m in default_models(MODELS)}
    assert repro <= {m.name for m in default_models(MODELS)}


@pytest.mark.parametrize("model", FAST, ids=[m.name for m in FAST])
def test_model_meets_expectation(model: Model) -> None:
    result = run_model(model, TLA_DIR, locate_java(), locate_jar(), workers=tlc_workers())
    assert result.result == model.expect, result.raw_output[-3000:]
    assert result.ok, result.note
    if model.expect != "pass":
        assert result.output.trace, "a violation must come with a counterexample"
