"""The build matrix: re-run a designated subset of the suite in the other builds.

The build is read once, at import (``EMBEDDING_CACHE_CHECKED``; ``python -O``
for the seed's asserts), so each build runs in a child pytest process: the
checked build (``1``), the full-sweep build (``full``) and the default build
under ``python -O``. Each child also checks it got the build it asked for
(test_cache_unit.py::test_build_is_the_one_claimed). The three children start
together and run side by side; a child never starts children of its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
#: Set in every child, so the matrix does not recurse.
CHILD_FLAG = "EMBEDDING_CACHE_BUILD_MATRIX_CHILD"

SUBSET = [
    "test_cache_unit.py",
    "test_stateful.py",
    "test_seed_differential.py",
    "test_threads.py",
    "test_contracts_catch_bugs.py",
]

#: name -> (python flags, EMBEDDING_CACHE_CHECKED, build the child must report, optimized)
BUILDS: dict[str, tuple[list[str], str, str, bool]] = {
    "checked": ([], "1", "checked", False),
    "full": ([], "full", "full", False),
    "python -O": (["-O"], "", "default", True),
}

pytestmark = pytest.mark.skipif(
    os.environ.get(CHILD_FLAG) == "1", reason="already inside a build-matrix child"
)


@pytest.fixture(scope="module")
def children() -> Iterator[dict[str, subprocess.Popen[str]]]:
    procs = {}
    for name, (flags, checked, expect, optimized) in BUILDS.items():
        env = dict(os.environ)
        env.update(
            {
                CHILD_FLAG: "1",
                "EMBEDDING_CACHE_CHECKED": checked,
                "EMBEDDING_CACHE_EXPECT_BUILD": expect,
                "EMBEDDING_CACHE_EXPECT_OPTIMIZE": "1" if optimized else "0",
                "HYPOTHESIS_PROFILE": os.environ.get("HYPOTHESIS_PROFILE", "ci"),
            }
        )
        cmd = [sys.executable, *flags, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs"]
        cmd += [str(TESTS / f) for f in SUBSET]
        procs[name] = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
    yield procs
    for proc in procs.values():
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("build", list(BUILDS))
def test_the_subset_passes_in_build(build: str, children: dict[str, subprocess.Popen[str]]) -> None:
    out, _ = children[build].communicate(timeout=300)
    assert children[build].returncode == 0, f"{build} build failed:\n{out}"
    summary = out.strip().splitlines()[-1]
    assert " passed" in summary and "failed" not in summary, out
    if build == "python -O":
        # The contract tests are skipped there (no contracts): say so, not more.
        assert "contracts exist only in the checked builds" in out
    else:
        assert " skipped" not in summary, f"{build} build skipped tests:\n{out}"
