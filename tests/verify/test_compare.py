"""``verify --compare``: two reports, flattened to (step, item) entries, and their differences.

On small handmade reports (the shape ``verify --json`` writes): a regression
fails the comparison and the command; changed counts, new and missing
entries are reported without failing it; seconds within the noise are not.
"""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from embedding_cache_checker.tlc.command import EXIT_FAILED, EXIT_OK, EXIT_SETUP
from embedding_cache_checker.verify import command
from embedding_cache_checker.verify.compare import compare, entries


def _report() -> dict[str, Any]:
    """A small report: two TLC models, one policy with one replay model, one trace,
    one planted bug, linearizability; and a simulation."""
    return {
        "ok": True,
        "tlc": {
            "models": [
                {
                    "name": "MCCore",
                    "ok": True,
                    "result": "pass",
                    "distinct_states": 100,
                    "seconds": 10.0,
                },
                {
                    "name": "MCBugX",
                    "ok": True,
                    "result": "XInv",
                    "distinct_states": 7,
                    "seconds": 2.0,
                },
            ]
        },
        "policies": {
            "fifo": {
                "conformance": {
                    "models": [
                        {
                            "model": "MCReplayDeep",
                            "full": False,
                            "states": 50,
                            "edges_total": 400,
                            "edges_replayed": 400,
                            "mismatches": 0,
                            "depth_bound": 4,
                            "tlc_seconds": 30.0,
                            "replay_seconds": 20.0,
                        }
                    ]
                },
                "trace_validation": {
                    "details": [
                        {"trace": "sequential-1", "accepted": True, "steps": 1000, "seconds": 3.0}
                    ]
                },
                "crosshair": {
                    "ok": True,
                    "conditions": 64,
                    "counterexamples": 0,
                    "cpu_seconds": 90.0,
                },
                "planted": {
                    "details": [
                        {
                            "name": "EvictOneTooMany",
                            "replay": True,
                            "traces": True,
                            "crosshair": None,
                        }
                    ]
                },
                "linearizability": {
                    "ok": True,
                    "histories": 200,
                    "operations": 12800,
                    "mutants_caught": 4,
                    "seconds": 1.2,
                },
            }
        },
        "simulate": {
            "models": [
                {
                    "name": "MCSimFifo",
                    "ok": True,
                    "result": "pass",
                    "traces": 90,
                    "states": 18000,
                    "seconds": 300.0,
                }
            ]
        },
        "steps": {"tlc": {"ok": True, "seconds": 12.0}},
    }


def test_a_report_flattens_to_entries_of_every_step() -> None:
    found = entries(_report())
    assert set(found) == {
        ("step", "tlc"),
        ("tlc", "MCCore"),
        ("tlc", "MCBugX"),
        ("conformance", "fifo/MCReplayDeep"),
        ("traces", "fifo/sequential-1"),
        ("crosshair", "fifo"),
        ("planted", "fifo/EvictOneTooMany"),
        ("linearizability", "fifo"),
        ("simulate", "MCSimFifo"),
    }
    assert found[("conformance", "fifo/MCReplayDeep")] == {
        "ok": True,
        "states": 50,
        "edges": 400,
        "mismatches": 0,
        "depth": 4,
        "seconds": 50.0,
    }
    assert found[("planted", "fifo/EvictOneTooMany")]["ok"] is True  # crosshair None: blind


def test_identical_reports_do_not_differ() -> None:
    result = compare(_report(), _report())
    assert result.changes == [] and result.ok
    assert result.unchanged == len(entries(_report()))


def test_regression_changed_counts_new_and_missing() -> None:
    old, new = _report(), _report()
    new["tlc"]["models"][1].update(ok=False, result="pass")  # the bug is no longer found
    new["tlc"]["models"][0]["distinct_states"] = 120
    fifo = new["policies"]["fifo"]
    fifo["conformance"]["models"][0].update(depth_bound=5, edges_total=9000, edges_replayed=9000)
    fifo["planted"]["details"].append({"name": "NewBug", "replay": False, "traces": True})
    del new["simulate"]
    old["policies"]["fifo"]["linearizability"]["ok"] = False  # fixed since

    result = compare(old, new)
    kinds = {(c.step, c.item): c.kind for c in result.changes}
    assert kinds == {
        ("tlc", "MCBugX"): "regression",
        ("tlc", "MCCore"): "changed",
        ("conformance", "fifo/MCReplayDeep"): "changed",
        ("planted", "fifo/NewBug"): "new",
        ("simulate", "MCSimFifo"): "missing",
        ("linearizability", "fifo"): "fixed",
    }
    assert not result.ok and [c.item for c in result.regressions] == ["MCBugX"]
    detail = {c.item: c.detail for c in result.changes}
    assert detail["MCCore"] == "states 100 -> 120 (+20)"
    assert detail["MCBugX"] == "ok True -> False; result XInv -> pass"
    assert "depth 4 -> 5 (+1)" in detail["fifo/MCReplayDeep"]
    assert "edges 400 -> 9,000 (+8,600)" in detail["fifo/MCReplayDeep"]
    assert detail["fifo/NewBug"].endswith("FAILING")
    counts = result.counts()
    assert counts["regression"] == 1 and counts["new"] == 1 and counts["missing"] == 1
    table = result.render()
    assert "REGRESSION" in table.splitlines()[2]  # regressions first, under the header
    assert "1 REGRESSION(S)" in table


def test_seconds_within_the_noise_are_not_changes() -> None:
    old, new = _report(), _report()
    new["tlc"]["models"][0]["seconds"] = 12.0  # +20 %: noise
    new["tlc"]["models"][1]["seconds"] = 2.9  # +45 %, but under a second
    new["simulate"]["models"][0]["seconds"] = 420.0  # +40 %: a change
    result = compare(old, new)
    assert [(c.item, c.detail) for c in result.changes] == [
        ("MCSimFifo", "seconds 300 -> 420 (+40%)")
    ]
    assert result.ok


def _write(path: Path, data: dict[str, Any]) -> str:
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    command.add_parser(parser.add_subparsers())
    return parser.parse_args(["verify", *argv])


def test_the_command_compares_two_files_and_fails_on_a_regression(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _write(tmp_path / "old.json", _report())
    same = _write(tmp_path / "same.json", _report())
    assert command.run_command(_args("--compare", old, "--against", same)) == EXIT_OK
    assert "no regression" in capsys.readouterr().out

    broken = copy.deepcopy(_report())
    broken["policies"]["fifo"]["trace_validation"]["details"][0]["accepted"] = False
    new = _write(tmp_path / "new.json", broken)
    assert command.run_command(_args("--compare", old, "--against", new)) == EXIT_FAILED
    out = capsys.readouterr().out
    assert "REGRESSION" in out and "fifo/sequential-1" in out

    assert command.run_command(_args("--compare", old, "--against", new, "--json")) == EXIT_FAILED
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False and data["counts"]["regression"] == 1

    # Improvements only: exit 0.
    assert command.run_command(_args("--compare", new, "--against", old)) == EXIT_OK


def test_the_command_reports_unreadable_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _write(tmp_path / "old.json", _report())
    assert command.run_command(_args("--compare", old, "--against", "nope.json")) == EXIT_SETUP
    assert "cannot read report nope.json" in capsys.readouterr().out
    assert command.run_command(_args("--against", old)) == EXIT_SETUP


def test_a_change_of_profile_is_listed_not_failed() -> None:
    old, new = _report(), _report()
    old["profile"] = {"name": "ci", "lin_histories": 200}
    new["profile"] = {"name": "nightly", "lin_histories": 1000}
    result = compare(old, new)
    assert [(c.step, c.kind) for c in result.changes] == [("profile", "changed")]
    assert result.changes[0].detail == "lin_histories 200 -> 1,000 (+800); name ci -> nightly"
    assert result.ok
