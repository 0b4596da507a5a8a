"""The protocol models (tla/protocol/): the cache's callers in vLLM 0.33 and the safe order.

Without TLC: the manifest lists the protocol models (the engine's order of calls, the
NIXL consumer read, the producer session) with their tags and expectations; the
findings in vLLM's order are the safe model with Order = "vllm" (so the safe model with
the safe step replaced by vLLM's is caught); each model without a fairness assumption
drops exactly that one; the NIXL read's findings are its passing model with exactly one
fix missing; the GPU encoder cache is opt-in (GpuCache, KeepRule FALSE in every other
model), and its two leaks are its passing model (the safe order with the keep rule)
without the rule, or in vLLM's order on a producer-only instance; ``tlc --repro``
leaves a caller's own steps out and, for a model of the callers, requires the code to
follow the counterexample (shown to fail on a case the code does not follow).

With TLC (needs java): each model meets its expectation, and ``tlc --repro`` turns
vLLM's two finite counterexamples into tests that pass on the real cache: the checked
hit is gone when the engine's consumer side comes to pin it (CheckedHitPinnedProp), and
its producer side re-allocates it for a save of an output never computed
(SaveOfComputedProp); in the safe order (the same calls, the hit pinned first) the real
cache keeps it. That save is never made (vLLM's worker saves only the outputs computed
in the step), so the entry stays not-ready for ever (SaveResolvesProp, a lasso no test
replays): on the real cache, once the worker reported every save it made, the entry
still holds its blocks and the pool can never be whole again.
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
from embedding_cache_checker.tlc.repro_writer import PROTOCOL_TAG, calls_only
from embedding_cache_checker.verify.counterexample_replay import Counterexample, replay
from embedding_cache_checker.verify.tla_values import TlaValue

TLA_DIR = find_tla_dir()
MODELS = {m.name: m for m in load_manifest(TLA_DIR)}
PROTOCOL = [m for m in MODELS.values() if PROTOCOL_TAG in m.tags]
MODULE = TLA_DIR / "protocol" / "EmbeddingCacheProtocol.tla"

BUG = {"protocol", "bug", "liveness", "fifo"}
#: Each protocol model: what TLC must report, its tags, its root module and the module
#: it checks.
EXPECTED = {
    "MCProtocolVllm": ("CheckedHitPinnedProp", {"protocol", "fifo"}, "MCProtocol"),
    "MCProtocolVllmSaves": ("SaveOfComputedProp", {"protocol", "fifo"}, "MCProtocol"),
    "MCProtocolVllmLeak": ("SaveResolvesProp", BUG, "MCProtocol"),
    "MCProtocolSafe": (PASS, {"protocol", "liveness", "fifo"}, "MCProtocol"),
    "MCProtocolNoReleaseFairness": ("LoadPinReleasedProp", BUG, "MCProtocol"),
    "MCProtocolGpuVllmLeak": ("SaveResolvesProp", BUG, "MCProtocol"),
    "MCProtocolGpuNoKeepRule": ("SaveResolvesProp", BUG, "MCProtocol"),
    "MCProtocolGpuSafe": (PASS, {"protocol", "liveness", "fifo"}, "MCProtocol"),
    "MCNixlReadStartError": ("SaveResolvesProp", BUG, "MCNixlRead"),
    "MCNixlReadPeerDown": ("SaveResolvesProp", BUG, "MCNixlRead"),
    "MCNixlRead": (PASS, {"protocol", "liveness", "fifo"}, "MCNixlRead"),
    "MCNixlReadNoPollFairness": ("SaveResolvesProp", BUG, "MCNixlRead"),
    "MCProducerSession": (PASS, {"protocol", "liveness", "fifo"}, "MCProducerSession"),
    "MCProducerSessionNoClockFairness": ("PinReleasedProp", BUG, "MCProducerSession"),
    "MCProducerSessionNoPollFairness": ("PinReleasedProp", BUG, "MCProducerSession"),
    "MCProducerSessionOverwrite": ("GrantPinsInv", {"protocol", "fifo"}, "MCProducerSession"),
}
#: The module each root checks.
CHECKS = {
    "MCProtocol": "EmbeddingCacheProtocol",
    "MCNixlRead": "EmbeddingCacheNixlRead",
    "MCProducerSession": "EmbeddingCacheProducerSession",
}
#: Each model without a fairness assumption: its full spec and the one it drops.
DROPS = {
    "MCProtocolNoReleaseFairness": ("ProtocolSpec", "LoadReleaseFairness"),
    "MCNixlReadNoPollFairness": ("NixlReadSpec", "ConsumerPollFairness"),
    "MCProducerSessionNoClockFairness": ("ProducerSessionSpec", "LeaseClockFairness"),
    "MCProducerSessionNoPollFairness": ("ProducerSessionSpec", "ProducerPollFairness"),
}

no_java = pytest.mark.skipif(
    shutil.which("java") is None and "JAVA_HOME" not in os.environ, reason="TLC needs java"
)


# ---------------------------------------------------------------- the manifest and configs


def test_the_manifest_lists_the_protocol_models_with_their_expectations() -> None:
    assert {m.name for m in PROTOCOL} == set(EXPECTED)
    for name, (expect, tags, root) in EXPECTED.items():
        model = MODELS[name]
        assert (model.expect, set(model.tags)) == (expect, tags), name
        assert model.policy == "fifo" and model.checks == CHECKS[root], name
        assert model.spec == f"protocol/models/{root}.tla", name
        assert model.config == f"protocol/models/{name}.cfg", name
        assert model.budget_seconds <= 60
        # A finding (anything but pass) states its defect once, in the manifest.
        assert bool(model.defect) == (expect != PASS), name


def _config(name: str) -> str:
    return (TLA_DIR / MODELS[name].config).read_text(encoding="utf-8")


def test_the_safe_model_checks_every_protocol_property_under_its_fairness() -> None:
    config = read_config(TLA_DIR / MODELS["MCProtocolSafe"].config)
    assert {
        "CheckedHitPinnedProp",
        "SaveOfComputedProp",
        "LoadPinReleasedProp",
        "SaveResolvesProp",
    } <= set(config.properties)
    assert "SPECIFICATION ProtocolSpec" in _config("MCProtocolSafe")


@pytest.mark.parametrize(
    ("name", "spec", "properties"),
    [
        ("MCNixlRead", "NixlReadSpec", {"SaveResolvesProp"}),
        ("MCProducerSession", "ProducerSessionSpec", {"SaveResolvesProp", "PinReleasedProp"}),
    ],
)
def test_the_passing_callers_check_their_obligations_under_their_fairness(
    name: str, spec: str, properties: set[str]
) -> None:
    assert properties <= set(read_config(TLA_DIR / MODELS[name].config).properties)
    assert f"SPECIFICATION {spec}" in _config(name)


def _constants(name: str) -> dict[str, str]:
    return read_config(TLA_DIR / MODELS[name].config).constants


@pytest.mark.parametrize("name", ["MCProtocolVllm", "MCProtocolVllmSaves", "MCProtocolVllmLeak"])
def test_the_findings_are_the_safe_model_in_vllms_order(name: str) -> None:
    """The safe model with the safe step replaced by vLLM's order: its constants but
    Order, so what TLC finds there is the order's, not another shape's."""
    safe, vllm = _constants("MCProtocolSafe"), _constants(name)
    assert (safe.pop("Order"), vllm.pop("Order")) == ('"safe"', '"vllm"')
    assert safe == vllm
    assert MODELS[name].expect in read_config(TLA_DIR / MODELS[name].config).properties


def test_the_leak_is_found_under_all_the_protocols_fairness() -> None:
    # Not for want of a fairness assumption: the safe model's own specification.
    assert "SPECIFICATION ProtocolSpec" in _config("MCProtocolVllmLeak")


#: The models of vLLM's GPU encoder cache (GpuCache = TRUE).
GPU = ("MCProtocolGpuVllmLeak", "MCProtocolGpuNoKeepRule", "MCProtocolGpuSafe")


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if n.startswith("MCProtocol")))
def test_the_gpu_encoder_cache_is_opt_in(name: str) -> None:
    """Every protocol model sets GpuCache and KeepRule; only the GPU models turn the
    cache on, and only the passing one the keep rule (the safe order's, by ASSUME)."""
    constants = _constants(name)
    assert constants["GpuCache"] == ("TRUE" if name in GPU else "FALSE"), name
    assert constants["KeepRule"] == ("TRUE" if name == "MCProtocolGpuSafe" else "FALSE"), name


def test_the_gpu_safe_model_is_the_safe_model_with_the_gpu_cache_and_the_rule() -> None:
    """MCProtocolGpuSafe checks what MCProtocolSafe checks, in its shape, under its
    specification: only GpuCache and KeepRule differ."""
    safe, gpu = (
        read_config(TLA_DIR / MODELS["MCProtocolSafe"].config),
        read_config(TLA_DIR / MODELS["MCProtocolGpuSafe"].config),
    )
    assert (safe.invariants, safe.properties) == (gpu.invariants, gpu.properties)
    assert "SPECIFICATION ProtocolSpec" in _config("MCProtocolGpuSafe")
    changed = {k for k in safe.constants if safe.constants[k] != gpu.constants[k]}
    assert changed == {"GpuCache", "KeepRule"}


@pytest.mark.parametrize(
    ("name", "changed"),
    [
        # Today's safe order: the passing model without the rule.
        ("MCProtocolGpuNoKeepRule", {"KeepRule": "FALSE"}),
        # vLLM's order on a producer-only instance: no checked hit to lose (section 3
        # needs both roles), so the leak TLC finds is the GPU cache's.
        (
            "MCProtocolGpuVllmLeak",
            {"KeepRule": "FALSE", "Order": '"vllm"', "Roles": '{"producer"}'},
        ),
    ],
)
def test_each_gpu_leak_is_the_gpu_safe_model_with_its_change(
    name: str, changed: dict[str, str]
) -> None:
    fixed, found = _constants("MCProtocolGpuSafe"), _constants(name)
    assert {k: v for k, v in found.items() if fixed[k] != v} == changed
    assert "SPECIFICATION ProtocolSpec" in _config(name)
    assert MODELS[name].expect in read_config(TLA_DIR / MODELS[name].config).properties


@pytest.mark.parametrize(
    ("name", "missing"),
    [("MCNixlReadStartError", "startError"), ("MCNixlReadPeerDown", "peerDown")],
)
def test_each_nixl_finding_is_the_passing_model_without_one_fix(name: str, missing: str) -> None:
    fixed, found = _constants("MCNixlRead"), _constants(name)
    kept = {"startError": '{"peerDown"}', "peerDown": '{"startError"}'}[missing]
    assert (fixed.pop("Fixes"), found.pop("Fixes")) == ('{"startError", "peerDown"}', kept)
    assert fixed == found
    assert "SPECIFICATION NixlReadSpec" in _config(name)


def test_the_overwrite_model_replaces_only_the_regrant() -> None:
    session, overwrite = _constants("MCProducerSession"), _constants("MCProducerSessionOverwrite")
    assert overwrite.pop("DropOld") == "<- DropOldOverwrites"
    assert session == overwrite


def _conjuncts(module: str, name: str) -> set[str]:
    """The names conjoined in the definition ``name == A /\\ B ...`` of ``module``."""
    end = r"(?:\n\s*\n|\n\\\*|\n\(\*|\n-|\n=|\Z)"
    match = re.search(rf"^{name} ==(.*?){end}", module, re.M | re.S)
    assert match is not None, name
    return set(re.findall(r"[A-Za-z]+", match.group(1)))


@pytest.mark.parametrize("name", sorted(DROPS))
def test_each_bug_model_drops_exactly_one_fairness(name: str) -> None:
    full, dropped = DROPS[name]
    model = MODELS[name]
    spec = re.search(r"^SPECIFICATION (\w+)", _config(name), re.M)
    assert spec is not None
    root = (TLA_DIR / model.spec).read_text(encoding="utf-8")
    module = (TLA_DIR / "protocol" / f"{model.checks}.tla").read_text(encoding="utf-8")
    assert _conjuncts(module, full) - _conjuncts(root, spec.group(1)) == {dropped}
    assert dropped in module


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
    """``tlc --repro`` on the finite findings: the directory and the command's JSON."""
    directory = tmp_path_factory.mktemp("protocol") / "tests"
    directory.mkdir()
    (directory / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    out = io.StringIO()
    names = ["MCProtocolVllm", "MCProtocolVllmSaves", "MCProducerSessionOverwrite"]
    with contextlib.redirect_stdout(out):
        code = main(["tlc", "--quiet", "--json", "--repro", str(directory), *names])
    assert code == 0, out.getvalue()
    return directory, {e["model"]: e for e in json.loads(out.getvalue())["models"]}


def _call(cache: EmbeddingCache, action: str, key: str, n: int) -> None:
    """The cache call of a counterexample's step (alloc, mark_ready, pin_if_ready, unpin)."""
    if action in ("Alloc", "AllocFail"):
        cache.alloc(key, n)
    elif action == "MarkReady":
        cache.mark_ready(key)
    elif action == "Unpin":
        cache.unpin(key)
    else:
        assert action == "PinIfReady", action
        cache.pin_if_ready(key)


def _case(directory: Path, name: str) -> Counterexample:
    case = runpy.run_path(str(directory / f"test_{name}.py"))["CASE"]
    assert isinstance(case, Counterexample)
    return case


def _lost_hit(calls: list[tuple[str, str, int]]) -> tuple[str, int]:
    """The checked hit a counterexample of vLLM's order loses, and the index of its last
    mark_ready: the key of the last call, ready before and evicted since by the alloc of
    another key."""
    hit = calls[-1][1]
    ready = max(i for i, c in enumerate(calls) if c == ("MarkReady", hit, 0))
    return hit, ready


@pytest.mark.tlc
@no_java
def test_the_written_tests_pass_on_the_real_cache(
    written: tuple[Path, dict[str, dict[str, object]]],
) -> None:
    directory, entries = written
    assert {e["violated"] for e in entries.values()} == {
        "CheckedHitPinnedProp",
        "SaveOfComputedProp",
        "GrantPinsInv",
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
    assert "3 passed" in done.stdout


@pytest.mark.tlc
@no_java
def test_vllms_order_loses_the_checked_hit_on_the_real_cache(
    written: tuple[Path, dict[str, dict[str, object]]],
) -> None:
    case = _case(written[0], "MCProtocolVllm")
    assert case.callers
    calls = [(s.action, s.key, s.n) for s in case.steps]
    # The engine's consumer side comes to pin the checked hit last, and pin_if_ready
    # misses: it was ready (marked ready before) and the alloc of another item, computed
    # in the same step, evicted it; its own producer side ran just before (an alloc).
    action, hit, _ = calls[-1]
    assert (action, case.steps[-1].result) == ("PinIfReady", "none")
    hit, ready = _lost_hit(calls)
    evicting = [c for c in calls[ready + 1 : -1] if c[0] == "Alloc" and c[1] != hit]
    assert evicting and calls[-2][:2] in {("Alloc", hit), ("AllocFail", hit)}
    # On the code, in vLLM's order: the same answer.
    cache = EmbeddingCache(case.num_blocks)
    for call in calls[:-2]:
        _call(cache, *call)
    assert cache.get(hit) is None
    # The safe order: the same calls with the hit pinned before the computed items'
    # allocs, and no producer side for it.
    safe = EmbeddingCache(case.num_blocks)
    for call in calls[: ready + 1]:
        _call(safe, *call)
    pinned = safe.pin_if_ready(hit)
    assert pinned is not None and pinned.ready
    for call in evicting:
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
    case = _case(written[0], "MCProtocolVllm")
    last = case.steps[-1]._replace(result="entry")
    claimed = dataclasses.replace(case, steps=(*case.steps[:-1], last))
    report = replay(claimed, bug="")
    assert report.departure == len(case.steps) and not report.ok
    assert "does not reproduce the callers' finding" in report.summary()
    as_cache = dataclasses.replace(claimed, callers=False)
    assert replay(as_cache, bug="").ok


@pytest.mark.tlc
@no_java
def test_vllms_order_saves_an_output_never_computed(
    written: tuple[Path, dict[str, dict[str, object]]],
) -> None:
    case = _case(written[0], "MCProtocolVllmSaves")
    calls = [(s.action, s.key, s.n) for s in case.steps]
    # The lost hit is re-allocated by its producer side (its consumer side comes after):
    # the save of an output neither computed nor loaded goes out.
    hit, ready = _lost_hit(calls)
    assert calls[-1][:2] == ("Alloc", hit) and case.steps[-1].result == "not-ready-entry"
    assert any(c[0] == "Alloc" and c[1] != hit for c in calls[ready + 1 : -1])


@pytest.mark.tlc
@no_java
def test_the_save_never_made_leaks_its_blocks_on_the_real_cache(
    written: tuple[Path, dict[str, dict[str, object]]],
) -> None:
    """MCProtocolVllmLeak's lasso (SaveResolvesProp) begins as MCProtocolVllmSaves's
    counterexample: on the real cache, after the worker reported every save it made
    (vLLM's saves only the outputs computed in the step), the re-allocated entry is
    still not-ready, still held, and no alloc of the whole pool can ever succeed."""
    case = _case(written[0], "MCProtocolVllmSaves")
    calls = [(s.action, s.key, s.n) for s in case.steps]
    hit, _ = _lost_hit(calls)
    cache = EmbeddingCache(case.num_blocks)
    for call in calls:
        _call(cache, *call)
    made = {key for action, key, _ in calls if action == "Alloc"} - {hit}
    for key in sorted(made):
        entry = cache.get(key)
        if entry is not None and not entry.ready:
            cache.mark_ready(key)
    entry = cache.get(hit)
    assert entry is not None and not entry.ready
    assert cache.has_held_entries()
    assert cache.alloc("whole-pool", case.num_blocks) is None
    # Non-vacuity: had that save been made and reported, the pool would be whole again.
    cache.mark_ready(hit)
    assert not cache.has_held_entries()
    assert cache.alloc("whole-pool", case.num_blocks) is not None


@pytest.mark.tlc
@no_java
def test_a_regrant_that_overwrites_leaves_a_pin_no_grant_holds(
    written: tuple[Path, dict[str, dict[str, object]]],
) -> None:
    """MCProducerSessionOverwrite (GrantPinsInv): a peer re-requests a grant it holds, and
    the grant is overwritten without its old pin's unpin. On the real cache, once the
    session released the one grant it knows of, the entry is still pinned and can never
    be evicted; with vLLM 0.33's unpin of the old pin it is evictable again."""
    case = _case(written[0], "MCProducerSessionOverwrite")
    calls = [(s.action, s.key, s.n) for s in case.steps]
    action, key, _ = calls[-1]
    assert action == "PinIfReady" and calls[-2] == calls[-1]
    assert [s.result for s in case.steps[-2:]] == ["entry", "entry"]
    cache = EmbeddingCache(case.num_blocks)
    for call in calls:
        _call(cache, *call)
    cache.unpin(key)  # the session's one grant ends (completion, sweep or close)
    entry = cache.get(key)
    assert entry is not None and entry.pin_count == 1
    assert cache.alloc("other", case.num_blocks) is None
    cache.unpin(key)  # vLLM 0.33 unpins the old pin when it re-grants
    assert cache.alloc("other", case.num_blocks) is not None
