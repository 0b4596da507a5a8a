"""``embedding-cache tlc --repro``: a bug model's counterexample as a standalone test that
passes on the real code and fails on the planted bug making the model's mistake.

Without TLC: the catalogue links exactly one planted bug to every bug model; a
captured counterexample (data/counterexample/glue: fifo's eviction loop testing
``<=``, checked against the core) becomes a case, a test module that imports only
pytest and the installed distribution (``embedding_cache``, ``embedding_cache_checker``),
and replays: the real code departs from it and keeps
every check, the planted bug of the same mistake follows it and breaks a property.

With TLC (needs java), once per module: ``tlc --repro DIR`` on every bug model of
the manifest, then the written files run with pytest in a subprocess, once on the
real code (every test passes and reports the step where the code departs) and once
with ``EMBEDDING_CACHE_REPRO_BUG=linked`` (every test fails, and its report names the
invariant or property the model violates).
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import runpy
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from embedding_cache_checker.cli import main
from embedding_cache_checker.tlc.config import read_config
from embedding_cache_checker.tlc.manifest import Model
from embedding_cache_checker.tlc.output import parse_output, parse_trace
from embedding_cache_checker.tlc.repro_writer import (
    ReproError,
    build_case,
    read_states,
    render_test,
)
from embedding_cache_checker.tlc.runner import ModelResult
from embedding_cache_checker.verify.counterexample_replay import (
    LINKED,
    REPRO_BUG_ENV,
    Counterexample,
    code_under_test,
    replay,
)
from embedding_cache_checker.verify.planted import PLANTED, QUERY_BUGS, by_name, for_tla_model
from tlc.repro_models import BUG_MODELS, LINKED_MODELS, MODELS, UNREPLAYED_TAGS

# The bug models --repro turns into tests, and which it leaves out and why: one home.
NAMES = [m.name for m in BUG_MODELS]
CATALOGUE = (*PLANTED, *QUERY_BUGS)
GLUE = Path(__file__).parent / "data" / "counterexample" / "glue"
#: The import packages of the ``embedding-cache`` distribution.
DISTRIBUTION = ("embedding_cache", "embedding_cache_checker")


#: Tests that run TLC are marked ``tlc`` and skipped without java, as in test_models.py.
no_java = pytest.mark.skipif(
    shutil.which("java") is None and "JAVA_HOME" not in os.environ, reason="TLC needs java"
)


def _ids(model: Model) -> str:
    return model.name


# ---------------------------------------------------------------- the catalogue's links


def test_the_bug_models_are_the_mcbug_models() -> None:
    assert BUG_MODELS
    mcbug = {
        m.name
        for m in MODELS
        if m.name.startswith("MCBug") and not set(UNREPLAYED_TAGS) & set(m.tags)
    }
    assert {m.name for m in BUG_MODELS} == mcbug


@pytest.mark.parametrize("model", LINKED_MODELS, ids=_ids)
def test_each_bug_model_has_one_linked_planted_bug(model: Model) -> None:
    linked = [bug for bug in CATALOGUE if bug.tla_model == model.name]
    assert len(linked) == 1, [bug.name for bug in linked]
    assert for_tla_model(model.name) is linked[0]
    assert model.policy is not None and linked[0].applies_to(model.policy)


def test_every_link_names_a_bug_model() -> None:
    names = {m.name for m in MODELS if "bug" in m.tags and "safety" in m.tags}
    assert {bug.tla_model for bug in CATALOGUE if bug.tla_model} <= names


# ---------------------------------------------------------------- a captured counterexample


@pytest.fixture(scope="module")
def captured() -> tuple[Model, Counterexample]:
    """The captured refinement violation (fifo's loop evicting one too many, checked
    against the core spec), as ``--repro`` builds its case."""
    raw = (GLUE / "refinement_violation.out").read_text(encoding="utf-8")
    model = Model(
        "MCBrokenFifoRefinesCore",
        "MCBrokenFifoRefinesCore.tla",
        "MCBrokenFifoRefinesCore.cfg",
        expect="CoreSpec",
        budget_seconds=30,
        checks="EmbeddingCacheFifo => EmbeddingCache",
        description="Enough <- EnoughOneTooMany, checked against the core.",
        check_deadlock=True,
        tags=("bug",),
        policy="fifo",
    )
    output = parse_output(raw)
    constants = read_config(GLUE / model.config).constants
    result = ModelResult(model, output, "CoreSpec", True, 1.0, constants, False, 12, raw, "")
    return model, build_case(model, result, GLUE)


def test_a_counterexample_becomes_the_calls_and_states_of_a_case(
    captured: tuple[Model, Counterexample],
) -> None:
    _, case = captured
    assert [(s.action, s.key, s.n, s.result) for s in case.steps] == [
        ("Alloc", "k1", 0, "not-ready-entry"),
        ("MarkReady", "k1", 0, "ok"),
        ("Alloc", "k2", 3, "not-ready-entry"),
    ]
    assert case.violated.startswith("CoreSpec") and case.checks == ("CoreSpec",)
    assert (case.policy, case.num_blocks, case.planted) == ("fifo", 3, None)
    assert case.initial.abstract.free == 3 and not case.initial.abstract.entries
    # The model's mistake: k1 (ready, 0 blocks) evicted though 3 blocks were free for 3.
    last = case.steps[-1].state.abstract
    assert [key for key, _ in last.entries] == ["k2"] and last.free == 0


def test_the_real_code_departs_from_it_and_keeps_every_check(
    captured: tuple[Model, Counterexample],
) -> None:
    report = replay(captured[1], bug="")
    assert report.ok, report.text()
    assert report.departure == 3, report.text()
    assert "departs from the counterexample at step 3" in report.summary()
    assert report.unchecked == ("CoreSpec",)  # a refinement: no code-level statement


def test_the_planted_bug_of_the_same_mistake_follows_it_and_breaks_a_property(
    captured: tuple[Model, Counterexample],
) -> None:
    report = replay(captured[1], bug="EvictOneTooMany")
    assert report.departure is None, report.text()
    # Evicting k1 when enough was free breaks the core's rule and fifo's (no victim).
    assert [(n, name) for n, name, _ in report.violations] == [
        (3, "EvictOnlyAsNeededProp"),
        (3, "EvictOldestFirstProp"),
    ]


def test_the_test_module_is_standalone_and_its_literals_round_trip(
    captured: tuple[Model, Counterexample], tmp_path: Path
) -> None:
    model, case = captured
    path = tmp_path / "test_captured.py"
    path.write_text(render_test(case, model, 'a "report" with a backslash \\'), encoding="utf-8")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = {
        (node.module or "") if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    # Standalone: pytest and the installed distribution's two packages (the cache, and the
    # checker's replay since the layout split them), nothing of the repository's tests.
    assert all(
        name in ("__future__", "pytest") or name.split(".")[0] in DISTRIBUTION for name in imported
    ), imported
    namespace = runpy.run_path(str(path))
    assert namespace["CASE"] == case
    assert 'a "report" with a backslash \\' in (ast.get_docstring(tree) or "")


def test_the_environment_chooses_the_code_under_test(
    captured: tuple[Model, Counterexample], monkeypatch: pytest.MonkeyPatch
) -> None:
    case = captured[1]
    monkeypatch.delenv(REPRO_BUG_ENV, raising=False)
    assert code_under_test(case)[1] == "the real code"
    monkeypatch.setenv(REPRO_BUG_ENV, "EvictOneTooMany")
    cache, code = code_under_test(case)
    assert code == "planted bug EvictOneTooMany"
    assert type(cache) is by_name("EvictOneTooMany").cache_class("fifo")
    monkeypatch.setenv(REPRO_BUG_ENV, LINKED)
    with pytest.raises(ValueError, match="no linked planted bug"):
        code_under_test(case)  # the captured model is not in the catalogue
    monkeypatch.setenv(REPRO_BUG_ENV, "NoSuchBug")
    with pytest.raises(ValueError, match="no planted bug of that name"):
        code_under_test(case)


def test_a_lasso_is_refused() -> None:
    raw = (GLUE / "liveness_violation.out").read_text(encoding="utf-8")
    with pytest.raises(ReproError, match="not finite"):
        read_states(parse_trace(raw))


# ---------------------------------------------------------------- every bug model, with TLC


@dataclass
class JUnitCase:
    """One generated test's outcome in a pytest run."""

    failed: bool
    text: str  # the failure's message and text
    properties: dict[str, str]


@dataclass
class Generated:
    """``tlc --repro`` on every bug model, and the written tests' runs."""

    exit_code: int
    models: dict[str, dict[str, Any]]  # the command's JSON, by model
    real: dict[str, JUnitCase]  # the run on the real code, by model
    linked: dict[str, JUnitCase]  # the run on each model's linked planted bug, by model


def _run_pytest(directory: Path, bug: str) -> dict[str, JUnitCase]:
    """Run the written tests with pytest in a subprocess, with ``REPRO_BUG_ENV=bug``."""
    xml = directory.parent / f"junit-{bug or 'real'}.xml"
    env = {**os.environ, REPRO_BUG_ENV: bug}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["-o", "junit_family=xunit1", f"--junitxml={xml}", str(directory)]
    done = subprocess.run(
        command, cwd=directory, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    cases = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        model = case.get("classname", "").rsplit(".", 1)[-1].removeprefix("test_")
        failure = case.find("failure")
        text = "" if failure is None else f"{failure.get('message', '')}\n{failure.text or ''}"
        properties = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
        failed = failure is not None or case.find("error") is not None
        cases[model] = JUnitCase(failed, text, properties)
    return cases


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Generated:
    """Run ``embedding-cache tlc --repro`` once on every bug model (TLC takes a few seconds
    each), then the written tests on the real code and on the linked planted bugs."""
    directory = tmp_path_factory.mktemp("repro") / "tests"
    directory.mkdir()
    # The directory is its own pytest root: no ini file above it applies.
    (directory / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["tlc", "--quiet", "--json", "--repro", str(directory), *NAMES])
    models = {entry["model"]: entry for entry in json.loads(out.getvalue())["models"]}
    return Generated(code, models, _run_pytest(directory, ""), _run_pytest(directory, LINKED))


@pytest.mark.tlc
@no_java
def test_repro_writes_a_test_for_every_bug_model(generated: Generated) -> None:
    assert generated.exit_code == 0, generated.models
    assert set(generated.models) == {m.name for m in BUG_MODELS}


@pytest.mark.tlc
@no_java
@pytest.mark.parametrize("model", BUG_MODELS, ids=_ids)
def test_the_written_test_replays_the_models_counterexample(
    generated: Generated, model: Model
) -> None:
    entry = generated.models[model.name]
    assert entry["path"] and Path(entry["path"]).is_file(), entry
    assert entry["violated"] == model.expect and entry["steps"] >= 1, entry
    linked = for_tla_model(model.name)
    assert linked is not None and entry["planted"] == linked.name


@pytest.mark.tlc
@no_java
@pytest.mark.parametrize("model", BUG_MODELS, ids=_ids)
def test_it_passes_on_the_real_code_and_names_the_departure(
    generated: Generated, model: Model
) -> None:
    case = generated.real[model.name]
    assert not case.failed, case.text
    assert case.properties["code"] == "the real code"
    departure = case.properties["departure_step"]
    assert departure == str(generated.models[model.name]["departure_step"] or "none")
    linked = for_tla_model(model.name)
    assert linked is not None
    if linked.kind == "query":
        # The model's mistake is in a query: the code reaches every state of the
        # counterexample, and answers has_held_entries() right in the last.
        assert departure == "none"
    else:
        assert 1 <= int(departure) <= generated.models[model.name]["steps"]


@pytest.mark.tlc
@no_java
@pytest.mark.parametrize("model", BUG_MODELS, ids=_ids)
def test_it_fails_on_the_planted_bug_of_the_models_mistake(
    generated: Generated, model: Model
) -> None:
    case = generated.linked[model.name]
    linked = for_tla_model(model.name)
    assert linked is not None
    assert case.failed, f"{linked.name} passed the replay of {model.name}"
    assert f"on planted bug {linked.name}: breaks" in case.text, case.text
    # The bug breaks the very invariant or property TLC reports the model violating.
    assert f": {model.expect}: " in case.text, case.text
