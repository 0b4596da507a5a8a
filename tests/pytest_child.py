"""A plain pytest child of a test: no xdist, no cache, and never the build matrix
(tests/test_builds.py). The tiers' tests (test_fast_tier.py, test_main_job_tier.py)
collect with it and run a checked child with it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The child's command line, before its own arguments.
PYTEST = (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist")
#: Set in the child so it starts no build matrix of its own.
NO_MATRIX = {"EMBEDDING_CACHE_BUILD_MATRIX_CHILD": "1"}


def collected(*args: str) -> list[str]:
    """The node ids ``pytest --collect-only *args`` finds, run from the repository root.
    O(the collection)."""
    proc = subprocess.run(
        [*PYTEST, "--collect-only", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **NO_MATRIX},
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return [line for line in proc.stdout.splitlines() if "::" in line]
