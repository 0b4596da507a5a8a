"""The manifest's schema is tla/MANIFEST.md: every field the manifest uses is defined
there, and every field defined there is one the code knows."""

from __future__ import annotations

import re
from pathlib import Path

from embedding_cache_checker.tlc import families
from embedding_cache_checker.tlc.manifest import derived_manifest, find_tla_dir

TLA_DIR = find_tla_dir()
SCHEMA = TLA_DIR / "MANIFEST.md"


def documented(heading: str, text: str | None = None) -> set[str]:
    """The backticked first-column names of the table under ``## heading``. O(size)."""
    text = SCHEMA.read_text(encoding="utf-8") if text is None else text
    section = text.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `(\w+)` \|", section, re.MULTILINE))


def test_every_field_of_every_model_entry_is_defined() -> None:
    derived = derived_manifest(TLA_DIR)
    used = {key for entry in [*derived.models, *derived.replay_models] for key in entry}
    assert used <= documented("Model entries"), used - documented("Model entries")


def test_the_families_policy_entries_and_configs_have_the_defined_fields() -> None:
    assert documented("Families") == families.FAMILY_FIELDS
    assert documented("Policy entries") == families.POLICY_FIELDS
    assert documented("Config templates") == families.CFG_FIELDS


def test_the_schema_check_sees_an_undefined_field(tmp_path: Path) -> None:
    # The check above fails on a field the page does not define.
    text = SCHEMA.read_text(encoding="utf-8").replace("| `defect` |", "| defect |")
    assert "defect" not in documented("Model entries", text)
