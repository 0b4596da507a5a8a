"""The generated models (tla/generated/): a reader can print any of them with one
command, and regenerating removes the roots and configs no longer derived."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from embedding_cache_checker.cli import main
from embedding_cache_checker.tlc import families
from embedding_cache_checker.tlc.manifest import MANIFEST_NAME, find_tla_dir

TLA_DIR = find_tla_dir()


def _entries_only(tmp_path: Path) -> Path:
    """A tla/ holding only the manifest and the policy entries: enough to derive."""
    tla = tmp_path / "tla"
    tla.mkdir()
    shutil.copy(TLA_DIR / MANIFEST_NAME, tla / MANIFEST_NAME)
    for entry in TLA_DIR.glob(f"{families.POLICIES_DIR}/*/{families.POLICY_ENTRY}"):
        target = tla / entry.relative_to(TLA_DIR)
        target.parent.mkdir(parents=True)
        shutil.copy(entry, target)
    return tla


def test_regenerating_removes_what_is_no_longer_derived(tmp_path: Path) -> None:
    tla = _entries_only(tmp_path)
    generated = tla / families.GENERATED_DIR
    generated.mkdir()
    stale = [generated / "MCGoneFifo.tla", generated / "MCGoneFifo.cfg"]
    kept = [generated / "notes.txt", generated / ".MCFifo.tla.partial"]
    for path in (*stale, *kept):
        path.write_text("old\n", encoding="utf-8")
    manifest = json.loads((tla / MANIFEST_NAME).read_text(encoding="utf-8"))
    families.expand(tla, manifest)
    assert not any(path.exists() for path in stale)
    assert all(path.exists() for path in kept)
    assert (generated / "MCLeaseSieve.cfg").is_file()


def test_tlc_print_shows_a_generated_models_root_and_config(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["tlc", "--print", "MCLeaseSieve"]) == 0
    out = capsys.readouterr().out
    assert "==> MCLeaseSieve: tla/generated/MCLeaseSieve.tla <==" in out
    assert "MODULE MCLeaseSieve" in out and "INSTANCE EmbeddingCacheLeases" in out
    assert "==> MCLeaseSieve: tla/generated/MCLeaseSieve.cfg <==" in out
    assert "SPECIFICATION LeaseSpec" in out


def test_tlc_print_wants_a_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tlc", "--print"]) == 2
    assert "name the models" in capsys.readouterr().err
