"""How many TLC workers a test's model check asks for."""

from __future__ import annotations

import os


def tlc_workers() -> int:
    """1 when pytest-xdist already runs a worker process per core (a second TLC thread
    then only competes with the other worker: measured, 8-16% more CPU for the same
    states, docs/MEASURED.md "TLC workers under pytest-xdist"); else the core count. O(1)."""
    cores = os.cpu_count() or 1
    running = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    return 1 if running >= cores else cores
