"""The launcher's module search path: TLC finds modules across tla/'s subfolders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from embedding_cache_checker.tlc.jar import locate_jar, locate_java
from embedding_cache_checker.tlc.manifest import find_tla_dir, load_manifest
from embedding_cache_checker.tlc.output import TlcOutcome
from embedding_cache_checker.tlc.process import (
    LIBRARY_PROPERTY,
    check_command,
    in_module_folder,
    library_dirs,
    with_library,
)
from embedding_cache_checker.tlc.runner import over_budget, run_model, run_tlc

#: A module that a root in another folder extends.
COUNTER = "---- MODULE Counter ----\nEXTENDS Naturals\nVARIABLE x\nInit == x = 0\n"
COUNTER += "Next == x < 2 /\\ x' = x + 1\n====\n"
ROOT = "---- MODULE MCCounter ----\nEXTENDS Counter\n====\n"


def _tree(root: Path) -> Path:
    """A tla/-like tree: a root module in models/, the module it extends in a new
    policy's folder that no list names."""
    (root / "models").mkdir(parents=True)
    (root / "policies" / "newpolicy").mkdir(parents=True)
    (root / "policies" / "newpolicy" / "Counter.tla").write_text(COUNTER)
    (root / "models" / "MCCounter.tla").write_text(ROOT)
    (root / "models" / "MCCounter.cfg").write_text("INIT Init\nNEXT Next\n")
    (root / "policies" / "empty").mkdir()  # a folder without modules is not searched
    return root


def test_library_is_every_folder_holding_a_module(tmp_path: Path) -> None:
    root = _tree(tmp_path / "tla")
    assert library_dirs(root) == tuple(
        sorted([(root / "models").resolve(), (root / "policies" / "newpolicy").resolve()])
    )
    command = with_library(
        check_command("models/MCCounter.tla", "x.cfg", workers=1, metadir=tmp_path), root
    )
    prop = [p for p in command.properties if p.startswith(f"-D{LIBRARY_PROPERTY}=")]
    assert len(prop) == 1 and prop[0].split("=", 1)[1].split(os.pathsep) == [
        str(d) for d in library_dirs(root)
    ]
    assert with_library(command, root).properties == command.properties  # replaced, not added


def test_a_root_in_a_folder_runs_from_that_folder(tmp_path: Path) -> None:
    command = check_command(
        "models/MCCounter.tla", "models/MCCounter.cfg", workers=1, metadir=tmp_path
    )
    moved, directory = in_module_folder(command, tmp_path)
    assert directory == tmp_path / "models" and moved.spec == "MCCounter.tla"
    config = moved.arguments[moved.arguments.index("-config") + 1]
    assert config == str((tmp_path / "models" / "MCCounter.cfg").resolve())
    flat = check_command("M.tla", "M.cfg", workers=1, metadir=tmp_path)
    assert in_module_folder(flat, tmp_path) == (flat, tmp_path)


@pytest.mark.tlc
def test_tlc_finds_a_module_of_a_new_folder(tmp_path: Path) -> None:
    root = _tree(tmp_path / "tla")
    run = run_tlc("models/MCCounter.tla", "models/MCCounter.cfg", root, check_deadlock=False)
    assert run.output.outcome is TlcOutcome.PASS, run.raw_output
    assert run.output.distinct_states == 3


@pytest.mark.tlc
def test_a_run_reports_its_cpu_time() -> None:
    """The launcher reads TLC's CPU time (every thread) when it reaps it."""
    tla_dir = find_tla_dir()
    core = next(m for m in load_manifest(tla_dir) if m.name == "MCCore")
    result = run_model(core, tla_dir, locate_java(), locate_jar(), 1)
    assert result.ok and result.cpu_seconds is not None and result.cpu_seconds > 0.1


def test_the_budget_is_judged_on_cpu_time() -> None:
    """Over budget iff TLC's CPU seconds exceed it; an unknown time (a killed run, which
    is judged a timeout) is not over budget."""
    core = next(m for m in load_manifest(find_tla_dir()) if m.name == "MCCore")
    budget = core.budget_seconds
    assert over_budget(core, budget) == "" and over_budget(core, None) == ""
    assert (
        over_budget(core, budget + 0.5) == f"over budget: {budget + 0.5:.1f} CPU s > {budget:g} s"
    )
