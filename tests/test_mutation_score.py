"""mutation/score.py: the mutation score and the survivors-file check can fail."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "mutation" / "score.py"


def _score_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_score", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


score = _score_module()


def _results(tmp_path: Path, codes: dict[str, int | None]) -> Path:
    mutants = tmp_path / "mutants"
    meta = mutants / "src" / "embedding_cache" / "m.py.meta"
    meta.parent.mkdir(parents=True)
    meta.write_text(json.dumps({"exit_code_by_key": codes}))
    return mutants


def _run(tmp_path: Path, codes: dict[str, int | None], listed: str, minimum: str) -> int:
    tmp_path.mkdir(parents=True, exist_ok=True)
    survivors = tmp_path / "SURVIVORS.md"
    survivors.write_text(listed)
    mutants = _results(tmp_path, codes)
    argv = ["--mutants", str(mutants), "--survivors", str(survivors), "--min", minimum]
    return int(score.main(argv))


NAMES = [f"embedding_cache.m.x_f__mutmut_{i}" for i in range(1, 21)]


def test_kinds_of_exit_codes() -> None:
    assert [score.kind_of(c) for c in (1, 3, -24, 0, 33, 5, None, 7)] == [
        "killed",
        "killed",
        "timeout",
        "survived",
        "no tests",
        "no tests",
        "not checked",
        "other",
    ]


def test_all_detected_and_nothing_listed_is_ok(tmp_path: Path) -> None:
    codes: dict[str, int | None] = dict.fromkeys(NAMES, 1)
    codes[NAMES[0]] = -24  # a timeout counts as detected
    assert _run(tmp_path, codes, "", "95") == 0


def test_a_listed_survivor_is_ok_above_the_minimum(tmp_path: Path) -> None:
    codes: dict[str, int | None] = dict.fromkeys(NAMES, 1)
    codes[NAMES[3]] = 0
    assert _run(tmp_path, codes, f"- `{NAMES[3]}`: equivalent", "95") == 0


def test_an_unlisted_survivor_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    codes: dict[str, int | None] = dict.fromkeys(NAMES, 1)
    codes[NAMES[3]] = 0
    assert _run(tmp_path, codes, "", "0") == 1
    assert f"survivor not in mutation/SURVIVORS.md: {NAMES[3]}" in capsys.readouterr().out


def test_a_stale_listed_name_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    codes: dict[str, int | None] = dict.fromkeys(NAMES, 1)
    assert _run(tmp_path, codes, f"`{NAMES[5]}`", "0") == 1
    assert "no longer a survivor" in capsys.readouterr().out


def test_below_the_minimum_fails(tmp_path: Path) -> None:
    codes: dict[str, int | None] = dict.fromkeys(NAMES, 1)
    codes[NAMES[0]] = codes[NAMES[1]] = 0  # 18/20 = 90%
    listed = f"`{NAMES[0]}` `{NAMES[1]}`"
    assert _run(tmp_path, codes, listed, "95") == 1
    assert _run(tmp_path / "again", codes, listed, "90") == 0


def test_a_mutant_not_checked_fails(tmp_path: Path) -> None:
    codes: dict[str, int | None] = dict.fromkeys(NAMES, 1)
    codes[NAMES[0]] = None
    assert _run(tmp_path, codes, "", "0") == 1


def test_no_results_exit_2(tmp_path: Path) -> None:
    assert score.main(["--mutants", str(tmp_path / "none")]) == 2


def test_the_json_report_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    codes: dict[str, int | None] = dict.fromkeys(NAMES, 1)
    codes[NAMES[0]], codes[NAMES[1]] = -24, 33
    mutants = _results(tmp_path, codes)
    listed = tmp_path / "S.md"
    listed.write_text(f"`{NAMES[1]}`")
    argv = ["--mutants", str(mutants), "--survivors", str(listed), "--json", "--min", "90"]
    assert score.main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["mutants"], report["killed"], report["timeout"], report["no tests"]) == (
        20,
        18,
        1,
        1,
    )
    assert report["score_percent"] == 95.0 and report["killed_by_a_test_percent"] == 90.0


def test_the_repository_survivors_file_names_only_well_formed_mutants() -> None:
    text = (SCRIPT.parent / "SURVIVORS.md").read_text()
    names = score.listed_names(SCRIPT.parent / "SURVIVORS.md")
    assert len(names) >= 1
    # every backticked mutant-looking name was understood (no typo escapes the check)
    assert text.count("__mutmut_") == sum(text.count(f"`{n}`") for n in names)
