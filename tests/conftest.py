"""Shared pytest configuration: the Hypothesis settings profiles, and the build
matrix's start right after collection (tests/test_builds.py).

Choose one with ``HYPOTHESIS_PROFILE`` (default ``dev``):

* ``ci`` -- deterministic (``derandomize=True``, no example database) and
  modest, so CI runs are repeatable and fast;
* ``dev`` -- random, the default example count, the local example database;
* ``thorough`` -- many more examples and longer stateful runs, for a soak.

Every profile disables the per-example deadline: the checked builds and the
shared 2-core machine make example timing meaningless.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fast_tier import in_fast_tier
from hypothesis import settings
from main_job_tier import in_main_job_tier

#: The bench's tests (``_bench_heap_frozen``).
BENCH_TESTS = Path(__file__).resolve().parent / "bench"

# Helper modules' asserts must survive ``python -O`` (the build matrix runs one).
pytest.register_assert_rewrite("cache_observe", "reference_models")

settings.register_profile("ci", deadline=None, derandomize=True, database=None, max_examples=100)
settings.register_profile("dev", deadline=None, max_examples=100)
settings.register_profile("thorough", deadline=None, max_examples=2000, stateful_step_count=100)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(autouse=True)
def _bench_heap_frozen(request: pytest.FixtureRequest) -> Iterator[None]:
    """The bench's tests (tests/bench/) run with the heap they found frozen (``gc.freeze``).

    Under pytest-xdist they run in a worker that has run other tests before them: every
    ``gc.collect()`` the bench makes (``memory.traced_bytes``, the runner's timed windows)
    would walk that whole heap, which took test_beyond_seed.py from seconds to minutes
    late in the suite (docs/MEASURED.md, "Feedback in minutes"). Frozen, the
    collections skip it; what the bench measures (allocations and time after it starts)
    is unchanged."""
    if BENCH_TESTS not in request.node.path.parents:
        yield
        return
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.hookimpl(tryfirst=True)  # before -m chooses the items
def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark the fast tier's tests ``fast`` (tests/fast_tier.py), for ``-m fast``, and the
    main job's tier ``main_job`` (tests/main_job_tier.py), which the README's test
    command leaves out (``-m "not main_job"``)."""
    if in_fast_tier(item.nodeid):
        item.add_marker(pytest.mark.fast)
    if in_main_job_tier(item.nodeid):
        item.add_marker(pytest.mark.main_job)


@pytest.hookimpl(trylast=True)  # after -k / --deselect have chosen the items
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The build matrix (tests/test_builds.py) runs beside the suite: when its tests
    were collected, start its child builds now and run its tests (which wait for
    the children) last."""
    matrix = [item for item in items if item.path.name == "test_builds.py"]
    if not matrix:
        return
    items[:] = [item for item in items if item.path.name != "test_builds.py"] + matrix
    module = getattr(matrix[0], "module", None)
    if module is not None:
        module.start_children()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A run that ends, for any reason (``-x``, Ctrl-C, a failure), ends the build
    matrix's children it started: here when this process is the whole run; under
    pytest-xdist each child's wrapper ends it once the run's controller is gone
    (tests/test_builds.py, ``WRAPPER``), since one worker's session may end while
    another still waits for the children."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        return
    module = sys.modules.get("test_builds")
    if module is not None:
        module.stop_children()
