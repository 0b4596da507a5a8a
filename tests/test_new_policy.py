"""A new policy is its own files: a throwaway one added to a copy of the project is
found by every layer, and nothing shared is edited.

The throwaway policy ``twin`` is sieve's files copied under a new name (the rule is
sieve's; only the names change), into a temporary copy of src/, tests/, spec/ and
tla/. Nothing else in the copy is touched. Then, in child processes on the copy:
the runtime registry, the checker's catalogue and adapter, and verify's plan all
find it; the manifest derives every model of every layer for it; TLC passes one of
its layer models and catches one of its bug models; its own tests and the
registry-driven stateful test run on it. spec/POLICIES.md section 4 promises
exactly this file list (:data:`POLICY_FILES`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from embedding_cache_checker.tlc.jar import locate_java

ROOT = Path(__file__).resolve().parents[1]

#: A policy's own files, ``{name}`` its registry name and ``{Name}`` its module's
#: suffix: the list spec/POLICIES.md section 4 gives (at most 9, none shared).
POLICY_FILES = (
    "spec/policies/{name}.md",
    "src/embedding_cache/policies/{name}.py",
    "src/embedding_cache_checker/verify/planted/{name}.py",
    "tests/reference_models/{name}.py",
    "tests/test_{name}_policy.py",
    "tla/policies/{name}/EmbeddingCache{Name}.tla",
    "tla/policies/{name}/EmbeddingCache{Name}Check.tla",
    "tla/policies/{name}/EmbeddingCache{Name}Bugs.tla",
    "tla/policies/{name}/policy.json",
)

#: The policy copied, and the throwaway's names.
SOURCE = ("sieve", "Sieve", "SIEVE")
TWIN = ("twin", "Twin", "TWIN")

#: Every model kind a policy gets, by the manifest's family ids.
FAMILIES = (
    "main",
    "refinement",
    "bug",
    "big",
    "lease",
    "admission",
    "contiguity",
    "combined",
    "inductive",
    "lease_inductive",
    "admission_inductive",
    "contiguity_inductive",
    "combined_inductive",
    "replay",
    "lease_replay",
    "admission_replay",
    "contiguity_replay",
)

pytestmark = [pytest.mark.slow, pytest.mark.tlc]


def _files(names: tuple[str, str, str]) -> list[str]:
    return [f.format(name=names[0], Name=names[1]) for f in POLICY_FILES]


def _renamed(text: str) -> str:
    for old, new in zip(SOURCE, TWIN, strict=True):
        text = text.replace(old, new)
    return text


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's src/, tests/, spec/ and tla/ with the throwaway policy's files
    added, and nothing else changed."""
    dest = tmp_path_factory.mktemp("project")
    ignore = shutil.ignore_patterns("__pycache__", "generated", "*.egg-info", ".hypothesis")
    for part in ("src", "tests", "spec", "tla"):
        shutil.copytree(ROOT / part, dest / part, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", dest / "pyproject.toml")
    for source, target in zip(_files(SOURCE), _files(TWIN), strict=True):
        assert (ROOT / source).is_file(), f"{source}: a policy's file the guide lists is missing"
        assert not (dest / target).exists()
        (dest / target).parent.mkdir(parents=True, exist_ok=True)
        (dest / target).write_text(_renamed((ROOT / source).read_text(encoding="utf-8")))
    return dest


def _run(copy: Path, code: str, timeout: float = 600) -> str:
    """Run ``code`` in a child on the copy (its src/ first on the path). O(the child)."""
    env = {**os.environ, "PYTHONPATH": str(copy / "src"), "EMBEDDING_CACHE_TLA_DIR": ""}
    env.pop("EMBEDDING_CACHE_TLA_DIR")
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_guides_file_list_is_at_most_nine_files_none_shared() -> None:
    # Each path names the policy, so no two policies share a file; the list is
    # the one spec/POLICIES.md section 4 gives.
    assert len(POLICY_FILES) <= 9
    assert all("{name}" in path or "{Name}" in path for path in POLICY_FILES)
    guide = (ROOT / "spec/POLICIES.md").read_text(encoding="utf-8")
    for path in POLICY_FILES:
        shown = path.format(name="NAME", Name="Name")
        assert f"`{shown}`" in guide, f"spec/POLICIES.md section 4 does not list {shown}"


def test_every_layer_finds_the_new_policy(copy: Path) -> None:
    out = _run(
        copy,
        """
import json
from pathlib import Path
from embedding_cache import EVICTION_POLICIES, EmbeddingCache
from embedding_cache_checker.policies import adapter
from embedding_cache_checker.tlc.manifest import load_manifest, manifest_entries
from embedding_cache_checker.verify.planted import PLANTED
from embedding_cache_checker.verify.plans import plan_for
tla = Path("tla")
cache = EmbeddingCache(8, eviction="twin")
assert cache.alloc("k", 2) is not None
entries = [e for e in manifest_entries(tla) if e.get("policy") == "twin"]
plan = plan_for("twin", tla)
print(json.dumps({
    "registry": "twin" in EVICTION_POLICIES,
    "adapter": adapter("twin").name,
    "planted": sorted({b.policy for b in PLANTED if b.policy == "twin"}),
    "families": sorted({e.get("family") for e in entries if e.get("family")}),
    "files": all((tla / e["spec"]).is_file() and (tla / e["config"]).is_file() for e in entries),
    "models": len([m for m in load_manifest(tla) if m.policy == "twin"]),
    "planted_replays": [plan.planted, plan.planted_lease, plan.planted_admission,
                        plan.planted_contiguity],
}))
""",
    )
    found = json.loads(out.splitlines()[-1])
    assert found["registry"] and found["adapter"] == "twin"
    assert found["planted"] == ["twin"]
    assert found["families"] == sorted(FAMILIES)
    assert found["files"] and found["models"] >= 8
    assert found["planted_replays"] == [
        "MCReplayTwin",
        "MCReplayLeaseTwin",
        "MCReplayAdmissionTwin",
        "MCReplayContiguityTwin",
    ]


def test_tlc_checks_the_new_policys_models(copy: Path) -> None:
    locate_java()  # fails, not skips, without Java
    out = _run(
        copy,
        "from embedding_cache_checker.cli import main; "
        "raise SystemExit(main(['tlc', 'MCLeaseTwin', 'MCBugTwinHitMoves']))",
    )
    assert "MCLeaseTwin" in out and "MCBugTwinHitMoves" in out


def test_the_new_policys_tests_run(copy: Path) -> None:
    _run(
        copy,
        "import pytest; raise SystemExit(pytest.main(['-q', '-p', 'no:cacheprovider', "
        "'tests/test_twin_policy.py', 'tests/test_stateful.py', '-k', 'twin or Twin']))",
    )
