"""Each policy's conformance plan is derived from the registry and the manifest
(tla/models.json with each policy's tla/policies/NAME/policy.json).

No TLC: the manifest is read, and broken copies of it are written to a temporary
directory.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from embedding_cache.policies import EVICTION_POLICIES, FifoPolicy
from embedding_cache_checker.tlc.command import EXIT_SETUP
from embedding_cache_checker.tlc.manifest import MANIFEST_NAME, derived_manifest, find_tla_dir
from embedding_cache_checker.verify import command
from embedding_cache_checker.verify.graph_dump import model_files
from embedding_cache_checker.verify.plans import (
    PlanError,
    load_plans,
    plan_entries,
    plan_for,
)

TLA_DIR = find_tla_dir()


def test_every_registered_policy_has_a_plan_whose_planted_model_it_replays() -> None:
    plans = load_plans(TLA_DIR)
    assert list(plans) == list(EVICTION_POLICIES)
    for policy, plan in plans.items():
        assert plan.policy == policy and plan.full_replay
        assert plan.planted in (*plan.full_replay, *plan.bounded_replay)
        assert len(list(TLA_DIR.rglob(f"{plan.trace_module}.tla"))) == 1, plan.trace_module
        for model, _full in plan.replayed:
            root, config = model_files(TLA_DIR, model)
            assert (TLA_DIR / root).is_file() and (TLA_DIR / config).is_file(), model


def test_the_plans_are_the_ones_the_manifest_gives() -> None:
    plans = load_plans(TLA_DIR)
    fifo, gdsf, s3fifo = plans["fifo"], plans["gdsf"], plans["s3fifo"]
    rules = ("MCReplayAdmission", "MCReplayContiguity")
    assert fifo.full_replay == (  # MCSmoke: headline
        "MCSmoke",
        "MCReplayWide",
        "MCReplayLeaseFifo",
        *(f"{rule}Fifo" for rule in rules),
    )
    assert fifo.bounded_replay == ("MCReplayDeep",)
    assert fifo.planted == "MCReplayWide" and fifo.trace_params == {}
    assert gdsf.full_replay == ("MCReplayGdsf", "MCReplayLeaseGdsf", *(f"{r}Gdsf" for r in rules))
    assert gdsf.planted == "MCReplayGdsf" and gdsf.planted_lease == "MCReplayLeaseGdsf"
    # Every policy's, named from its module (the registry's policies, none listed).
    names = {p.trace_module.removeprefix("EmbeddingCache") for p in plans.values()}
    assert {p.planted_lease for p in plans.values()} == {f"MCReplayLease{n}" for n in names}
    assert {p.planted_admission for p in plans.values()} == {f"MCReplayAdmission{n}" for n in names}
    assert {p.planted_contiguity for p in plans.values()} == {
        f"MCReplayContiguity{n}" for n in names
    }
    assert gdsf.planted_models == (
        "MCReplayGdsf",
        "MCReplayLeaseGdsf",
        "MCReplayAdmissionGdsf",
        "MCReplayContiguityGdsf",
    )
    assert gdsf.trace_params == {"scale": 8, "max_freq": 3}
    assert s3fifo.full_replay == (
        "MCReplayS3Fifo",
        "MCReplayLeaseS3Fifo",
        *(f"{r}S3Fifo" for r in rules),
    )
    assert s3fifo.bounded_replay == ()
    assert gdsf.trace_module == "EmbeddingCacheGdsf" and fifo.trace_module == "EmbeddingCacheFifo"
    assert gdsf.tla_constants == ("Scale", "MaxFreq") and fifo.tla_constants == ()
    assert s3fifo.tla_constants == ("SmallTarget", "GhostCapacity")
    assert [m for m, _ in fifo.replayed] == [
        "MCSmoke",
        "MCReplayWide",
        "MCReplayLeaseFifo",
        "MCReplayAdmissionFifo",
        "MCReplayContiguityFifo",
        "MCReplayDeep",
    ]


def test_a_policy_has_at_most_one_planted_lease_replay_input(tmp_path: Path) -> None:
    def twice(data: dict[str, Any]) -> None:
        lease = next(e for e in data["replay_models"] if e["name"] == "MCReplayLeaseFifo")
        data["replay_models"].append({**lease, "name": "MCReplayLeaseFifo2"})

    with pytest.raises(PlanError, match="several lease replay inputs"):
        plan_for("fifo", _copy(tmp_path, twice))


@pytest.mark.parametrize("rule", ["Admission", "Contiguity"])
def test_a_policy_has_at_most_one_planted_replay_input_per_alloc_rule(
    tmp_path: Path, rule: str
) -> None:
    def twice(data: dict[str, Any]) -> None:
        entry = next(e for e in data["replay_models"] if e["name"] == f"MCReplay{rule}Fifo")
        data["replay_models"].append({**entry, "name": f"MCReplay{rule}Fifo2"})

    with pytest.raises(PlanError, match=f"several {rule.lower()} replay inputs"):
        plan_for("fifo", _copy(tmp_path, twice))


def test_an_alloc_rules_replay_input_is_not_the_policys_planted_model(tmp_path: Path) -> None:
    # The core's planted model is the one entry of no rule: the rules' inputs with
    # planted_replay true do not count against "exactly one".
    plan = plan_for("sieve", TLA_DIR)
    assert plan.planted == "MCReplaySieve"
    assert (plan.planted_admission, plan.planted_contiguity) == (
        "MCReplayAdmissionSieve",
        "MCReplayContiguitySieve",
    )

    def unplant(data: dict[str, Any]) -> None:
        for entry in data["replay_models"]:
            if entry["policy"] == "sieve" and entry["name"].startswith("MCReplay"):
                entry["planted_replay"] = entry["name"] == "MCReplaySieve"

    plan = plan_for("sieve", _copy(tmp_path, unplant))
    assert plan.planted == "MCReplaySieve"
    assert plan.planted_admission is plan.planted_contiguity is plan.planted_lease is None


def test_every_replay_input_is_replayed_and_every_policy_is_registered() -> None:
    derived = derived_manifest(TLA_DIR)
    assert all(entry["replay"] in ("full", "bounded") for entry in derived.replay_models)
    policies = {e.get("policy") for e in plan_entries(TLA_DIR)} - {None}
    assert policies == set(EVICTION_POLICIES)


def _copy(tmp_path: Path, edit: Any) -> Path:
    """The manifest with every policy's entries derived and written out flat (no
    families, no policy folders), copied to ``tmp_path`` after ``edit(data)``."""
    derived = derived_manifest(TLA_DIR)
    data = {"models": derived.models, "replay_models": derived.replay_models}
    edit(data)
    (tmp_path / MANIFEST_NAME).write_text(json.dumps(data), encoding="utf-8")
    return tmp_path


def test_a_registered_policy_without_entries_is_named_with_what_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A policy registered in the code with no entry in the manifest (a name no real
    # policy has: the test must not depend on which policies exist).
    monkeypatch.setitem(EVICTION_POLICIES, "unmodeled", FifoPolicy)
    with pytest.raises(PlanError, match=r"policy 'unmodeled' has no replay model in .*models.json"):
        plan_for("unmodeled", TLA_DIR)
    with pytest.raises(PlanError, match="unknown policy 'lru'"):
        plan_for("lru", TLA_DIR)


def test_the_command_says_what_the_manifest_lacks(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(EVICTION_POLICIES, "unmodeled", FifoPolicy)
    parser = argparse.ArgumentParser()
    command.add_parser(parser.add_subparsers())
    args = parser.parse_args(["verify", "--policy", "fifo,unmodeled", "--only", "traces"])
    assert command.run_command(args) == EXIT_SETUP
    out = capsys.readouterr().out
    assert "unknown policies" not in out and "policy 'unmodeled' has no replay model" in out


def test_a_missing_planted_replay_or_trace_module_is_named(tmp_path: Path) -> None:
    def drop(field: str) -> Any:
        def edit(data: dict[str, Any]) -> None:
            for entry in data["replay_models"]:
                if entry["policy"] == "gdsf":
                    entry.pop(field, None)  # the lease replay input has no trace fields

        return edit

    tla_dir = _copy(tmp_path, drop("planted_replay"))
    with pytest.raises(PlanError, match='exactly one replayed entry with "planted_replay"'):
        plan_for("gdsf", tla_dir)
    assert plan_for("fifo", tla_dir).planted == "MCReplayWide"  # the others are unaffected
    tla_dir = _copy(tmp_path, drop("trace_module"))
    with pytest.raises(PlanError, match=r"MCReplayGdsf .* has no trace_module"):
        plan_for("gdsf", tla_dir)


def test_a_bad_replay_kind_is_refused(tmp_path: Path) -> None:
    def edit(data: dict[str, Any]) -> None:
        # fifo's first replay model (not the list's first: the policies are in
        # registry order, and another policy's name may sort before fifo's).
        first = next(m for m in data["replay_models"] if m.get("policy") == "fifo")
        first["replay"] = "partial"

    with pytest.raises(PlanError, match="replay must be 'full' or 'bounded', not 'partial'"):
        plan_for("fifo", _copy(tmp_path, edit))
