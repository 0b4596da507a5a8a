"""The fast tier (tests/fast_tier.py) stays what README.md says it is: every layer
once, each entry a test that exists and is marked ``fast``."""

from __future__ import annotations

import os
import subprocess

import pytest
from fast_tier import FAST_TIER, fast_ids, in_fast_tier
from pytest_child import NO_MATRIX, PYTEST, ROOT, collected

#: The layers README.md promises the tier runs (issue 26, "Feedback in minutes").
LAYERS = (
    "runtime unit tests",
    "contracts and the checked builds",
    "stateful Hypothesis",
    "TLC, the core",
    "TLC, inductive invariants",
    "TLC, a policy",
    "TLC, leases",
    "TLC, admission",
    "TLC, contiguity",
    "TLC, admission with contiguity",
    "TLC, the protocols",
    "state-graph replay",
    "a planted bug caught",
    "trace validation",
    "CrossHair",
    "linearizability",
    "the vLLM plugin",
)


def test_every_layer_has_a_test() -> None:
    assert set(LAYERS) <= set(FAST_TIER)
    assert all(FAST_TIER[layer] for layer in LAYERS)


def test_an_entry_names_a_test_its_parametrisations_or_its_file() -> None:
    entry = "tests/tlc/test_models.py::test_model_meets_expectation[MCCore]"
    assert in_fast_tier(entry)
    assert not in_fast_tier(entry.replace("MCCore", "MCLarge"))
    assert in_fast_tier("tests/test_cache_unit.py::test_anything[x]")
    assert not in_fast_tier("tests/test_cache_unit_extra.py::test_anything")


def test_each_entry_is_collected_and_marked_fast() -> None:
    """``pytest --collect-only -m fast`` of the tier's files finds each entry (a renamed
    test or a changed parameter fails here, not silently in the tier)."""
    files = sorted({i.split("::")[0] for i in fast_ids()})
    tier = collected("-m", "fast", *files)
    for entry in fast_ids():
        assert any(
            c == entry or c.startswith(entry + "[") or c.startswith(entry + "::") for c in tier
        ), f"the fast tier names {entry}, which is not collected"


def test_the_checked_build_reports_a_planted_bug(request: pytest.FixtureRequest) -> None:
    """The contracts exist only in the checked builds: a child under
    ``EMBEDDING_CACHE_CHECKED=1`` sees them report fifo's planted bugs. A run with the
    build matrix (tests/test_builds.py) runs the whole module there, so this is left to it."""
    if any(item.path.name == "test_builds.py" for item in request.session.items):
        pytest.skip("the build matrix runs the contracts in every checked build")
    proc = subprocess.run(
        [*PYTEST, "tests/test_contracts_catch_bugs.py", "-k", "contract_reports and fifo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "EMBEDDING_CACHE_CHECKED": "1", **NO_MATRIX},
    )
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert " passed" in summary and "skipped" not in summary, summary
