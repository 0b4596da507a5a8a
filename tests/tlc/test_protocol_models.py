"""The protocol models (tla/protocol/): an engine's order of calls on the cache.

Without TLC: the manifest lists the four models with their tags and expectations;
their configs are one shape (MCProtocolToday is MCProtocolSafe with today's order, so
the safe model with the safe step replaced by today's is caught); the bug model drops
exactly the release fairness; ``tlc --repro`` leaves a caller's own steps out and, for a
model of the callers, requires the code to follow the counterexample (shown to fail on
a case the code does not follow).

With TLC (needs java): each model meets its expectation, and ``tlc --repro`` turns
today's counterexamples into tests that pass on the real cache: the checked hit is gone
when the engine comes to pin it (CheckedHitPinnedProp), and it is re-allocated for a
save of an output never computed (SaveOfComputedProp); in the safe order (the same
calls, the hit pinned first) the real cache keeps it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import embedding_cache_checker
from embedding_cache import EmbeddingCache
from embedding_cache_checker.cli import main
from embedding_cache_checker.tlc.config import read_config
from embedding_cache_checker.tlc.manifest import PASS, find_tla_dir, load_manifest
from embedding_cache_checker.tlc.repro import PROTOCOL_TAG, calls_only
from embedding_cache_checker.verify.repro import Counterexample, replay
from embedding_cache_checker.verify.tla_values import TlaValue

TLA_DIR = find_tla_dir()
MODELS = {m.name: m for m in load_manifest(TLA_DIR)}
PROTOCOL = [m for m in MODELS.values() if PROTOCOL_TAG in m.tags]
MODULE = TLA_DIR / "protocol" / "EmbeddingCacheProtocol.tla"

#: Each protocol model: what TLC must report, its tags.
EXPECTED = {
    "MCProtocolToday": ("CheckedHitPinnedProp", {"protocol", "fifo"}),
    "MCProtocolTodaySaves": ("SaveOfComputedProp", {"protocol", "fifo"}),
    "MCProtocolSafe": (PASS, {"protocol", "liveness", "fifo"}),
    "MCProtocolNoReleaseFairness": ("LoadPinReleasedProp", {"protocol", "bug", "liveness", "fifo"}),
}

no_java = pytest.mark.skipif(
    shutil.which("java") is None and "JAVA_HOME" not in os.environ, reason="TLC needs java"
)


# ---------------------------------------------------------------- the manifest and configs


def test_the_manifest_lists_the_protocol_models_with_their_expectations() -> None:
    assert {m.name for m in PROTOCOL} == set(EXPECTED)
    for name, (expect, tags) in EXPECTED.items():
        model = MODELS[name]
        assert (model.expect, set(model.tags)) == (expect, tags), name
        assert model.policy == "fifo" and model.checks == "EmbeddingCacheProtocol"
        assert model.spec == "protocol/models/MCProtocol.tla", name
        assert model.config == f"protocol/models/{name}.cfg", name
        assert model.budget_seconds <= 60
        # A finding (anything but pass) states its defect once, in the manifest.
        assert bool(model.defect) == (expect != PASS), name


def test_the_safe_model_checks_every_protocol_property_under_its_fairness() -> None:
    config = read_config(TLA_DIR / MODELS["MCProtocolSafe"].config)
    assert {"CheckedHitPinnedProp", "SaveOfComputedProp", "LoadPinReleasedProp"} <= set(
        config.properties
    )
    assert "SPECIFICATION ProtocolSpec" in (TLA_DIR / MODELS["MCProtocolSafe"].config).read_text()


def _constants(name: str) -> dict[str, str]:
    return read_config(TLA_DIR / MODELS[name].config).constants


@pytest.mark.parametrize("name", ["MCProtocolToday", "MCProtocolTodaySaves"])
def test_the_findings_are_the_safe_model_in_todays_order(name: str) -> None:
    """The safe model with the safe step replaced by today's order: its constants but
    Order, so what TLC finds there is the order's, not another shape's."""
    safe, today = _constants("MCProtocolSafe"), _constants(name)
    assert (safe.pop("Order"), today.pop("Order")) == ('"safe"', '"today"')
    assert safe == today
    assert MODELS[name].expect in read_config(TLA_DIR / MODELS[name].config).properties


def _conjuncts(module: str, name: str) -> set[str]:
    """The names conjoined in the definition ``name == A /\\ B ...`` of ``module``."""
    end = r"(?:\n\s*\n|\n\\\*|\n\(\*|\n-|\n=|\Z)"
    match = re.search(rf"^{name} ==(.*?){end}", module, re.M | re.S)
    assert match is not None, name
    return set(re.findall(r"[A-Za-z]+", match.group(1)))


def test_the_bug_model_drops_exactly_the_release_fairness() -> None:
    root = (TLA_DIR / MODELS["MCProtocolNoReleaseFairness"].spec).read_text(encoding="utf-8")
    module = MODULE.read_text(encoding="utf-8")
    full = _conjuncts(module, "ProtocolSpec")
    assert full - _conjuncts(root, "NoReleaseFairnessSpec") == {"LoadReleaseFairness"}


def test_the_conjunct_reader_sees_a_dropped_assumption() -> None:
    # Non-vacuity of the check above: dropping another conjunct is seen.
    text = "Spec == A /\\ B /\\ C\n\nOther == A /\\ C\n"
    assert _conjuncts(text, "Spec") - _conjuncts(text, "Other") == {"B"}


# ---------------------------------------------------------------- the repro of callers


def _state(entries: str, op: str, engine: int) -> dict[str, TlaValue]:
    return {"entries": entries, "free": 1, "evictable": 0, "lastOp": op, "policy": "p", "e": engine}


def test_a_callers_own_step_is_left_out_of_the_calls() -> None:
    states = [
        _state("<<>>", "Init", 0),
        _state("<<>>", "Init", 1),  # the engine's check: no call
        _state("k1", "Alloc", 1),
        _state("k1", "Alloc", 2),  # a dispatch: no call
        _state("k1", "PinIfReady", 2),  # a missed pin_if_ready changes only lastOp
    ]
    kept = calls_only(states)
    assert [s["lastOp"] for s in kept] == ["Init", "Alloc", "PinIfReady"]


# ---------------------------------------------------------------- with TLC


def test_each_protocol_model_is_checked_against_its_expectation() -> None:
    """tests/tlc/test_models.py runs every model of the default run against its
    expectation: the protocol models must be in it (not run twice here)."""
    assert PROTOCOL and all(m.default_run for m in PROTOCOL), [m.name for m in PROTOCOL]


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, object]]]:
    """``tlc --repro`` on today's two findings: the directory and the command's JSON."""
    directory = tmp_path_factory.mktemp("protocol") / "tests"
    directory.mkdir()
    (directory / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    out = io.StringIO()
    names = ["MCProtocolToday", "MCProtocolTodaySaves"]
    with contextlib.redirect_stdout(out):
        code = main(["tlc", "--quiet", "--json", "--repro", str(directory), *names])
    assert code == 0, out.getvalue()
    return directory, {e["model"]: e for e in json.loads(out.getvalue())["models"]}


def _call(cache: EmbeddingCache, action: str, key: str, n: int) -> None:
    """The cache call of a counterexample's step (alloc, mark_ready, pin_if_ready)."""
    if action in ("Alloc", "AllocFail"):
        cache.alloc(key, n)
    elif action == "MarkReady":
        cache.mark_ready(key)
    else:
        assert action == "PinIfReady", action
        cache.pin_if_ready(key)


def _case(directory: Path, name: str) -> Counterexample:
    case = runpy.run_path(str(directory / f"test_{name}.py"))["CASE"]
    assert isinstance(case, Counterexample)
    return case


@pytest.mark.tlc
@no_java
def test_the_written_tests_pass_on_the_real_cache(
    written: tuple[Path, dict[str, dict[str, object]]],
) -> None:
    directory, entries = written
    assert {e["violated"] for e in entries.values()} == {
        "CheckedHitPinnedProp",
        "SaveOfComputedProp",
    }
    assert all(e["departure_step"] is None and e["real_code_ok"] for e in entries.values())
    # The written tests import the distribution this test imports (PYTHONPATH may be
    # relative to the checkout, and they run in their own directory).
    source = str(Path(embedding_cache_checker.__file__).resolve().parents[1])
    path = os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(directory)],
        cwd=directory,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "2 passed" in done.stdout


@pytest.mark.tlc
@no_java
def test_todays_order_loses_the_checked_hit_on_the_real_cache(
    written: tuple[Path, dict[str, dict[str, object]]],
) -> None:
    case = _case(written[0], "MCProtocolToday")
    assert case.callers
    calls = [(s.action, s.key, s.n) for s in case.steps]
    # The engine comes to pin the checked hit last, and pin_if_ready misses: it was ready
    # (marked ready before) and the alloc of a miss since evicted it.
    action, hit, _ = calls[-1]
    assert (action, case.steps[-1].result) == ("PinIfReady", "none")
    ready = max(i for i, c in enumerate(calls) if c == ("MarkReady", hit, 0))
    allocs = [c for c in calls[ready + 1 : -1] if c[0] == "Alloc"]
    assert allocs and all(key != hit for _, key, _ in allocs)
    # On the code, in today's order: the same answer.
    cache = EmbeddingCache(case.num_blocks)
    for call in calls[:-1]:
        _call(cache, *call)
    assert cache.get(hit) is None and cache.pin_if_ready(hit) is None
    # The safe order: the same calls with the hit pinned before the misses' allocs.
    safe = EmbeddingCache(case.num_blocks)
    for call in calls[: ready + 1]:
        _call(safe, *call)
    pinned = safe.pin_if_ready(hit)
    assert pinned is not None and pinned.ready
    for call in allocs:
        _call(safe, *call)
    entry = safe.get(hit)
    assert entry is not None and entry.ready and entry.pin_count == 1


@pytest.mark.tlc
@no_java
def test_the_callers_replay_fails_where_the_code_does_not_follow(
    written: tuple[Path, dict[str, dict[str, object]]],
) -> None:
    """Non-vacuity: a case claiming the hit survived (pin_if_ready hits) is not what the
    code does; the replay of a callers' case then fails, of a cache case it would not."""
    case = _case(written[0], "MCProtocolToday")
    last = case.steps[-1]._replace(result="entry")
    claimed = dataclasses.replace(case, steps=(*case.steps[:-1], last))
    report = replay(claimed, bug="")
    assert report.departure == len(case.steps) and not report.ok
    assert "does not reproduce the callers' finding" in report.summary()
    as_cache = dataclasses.replace(claimed, callers=False)
    assert replay(as_cache, bug="").ok


@pytest.mark.tlc
@no_java
def test_todays_order_saves_an_output_never_computed(
    written: tuple[Path, dict[str, dict[str, object]]],
) -> None:
    case = _case(written[0], "MCProtocolTodaySaves")
    calls = [(s.action, s.key) for s in case.steps]
    # The lost hit (pin_if_ready misses) is then re-allocated: its save goes out.
    assert calls[-2][0] == "PinIfReady" and case.steps[-2].result == "none"
    assert calls[-1] == ("Alloc", calls[-2][1]) and case.steps[-1].result == "not-ready-entry"
