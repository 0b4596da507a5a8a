"""The build matrix: re-run a designated subset of the suite in the other builds.

The build is read once, at import (``EMBEDDING_CACHE_CHECKED``; ``python -O``
for the seed's asserts), so each build runs in a child pytest process: the
checked build (``1``), the full-sweep build (``full``) and the default build
under ``python -O``. Each child also checks it got the build it asked for
(test_cache_unit.py::test_build_is_the_one_claimed). The three children start
together and run side by side; a child never starts children of its own.

The children start right after collection and this module's tests run last
(tests/conftest.py), so the builds run beside the rest of the suite. Under
pytest-xdist (CI runs ``-n auto``) the first worker starts them and whichever
worker runs this module waits for their exit codes in a folder shared by the
run (``matrix_dir``). The subset
runs every policy: the stateful machine per policy, the threads test per
policy, the unit tests per policy (the planted-bug hunts that run no contract code
are left out: see ``BUILD_INDEPENDENT`` and ``CHECKED_BUILD_INDEPENDENT``).
Each child's JUnit report is read back to check that every policy of
``EVICTION_POLICIES`` had its stateful machine and threads test pass there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from embedding_cache import EVICTION_POLICIES

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
    "test_contiguous_eviction.py",
    "test_lock_structure.py",
    "test_linearizability.py",
]

#: Left out of the children: the stateful machine's planted-bug hunts run bare
#: bodies with no contracts in any build (test_stateful.bug_machine), so each build
#: would repeat the default build's run of them exactly.
BUILD_INDEPENDENT = "tests/test_stateful.py::test_the_state_machine_catches_a_planted_bug"
#: Left out of the checked children too: the seed differential's planted-bug hunts run a
#: planted cache of bare bodies (``PlantedBug.cache_class``, no contract code in any
#: build) against vLLM's class, so a checked build repeats the default build's run
#: exactly; under ``-O`` the seed's asserts vanish and the streams differ, so it stays.
CHECKED_BUILD_INDEPENDENT = (
    "tests/test_contracts_catch_bugs.py::test_the_seed_differential_catches_a_planted_bug"
)

#: name -> (python flags, EMBEDDING_CACHE_CHECKED, build the child must report, optimized)
BUILDS: dict[str, tuple[list[str], str, str, bool]] = {
    "checked": ([], "1", "checked", False),
    "full": ([], "full", "full", False),
    "python -O": (["-O"], "", "default", True),
}

pytestmark = pytest.mark.skipif(
    os.environ.get(CHILD_FLAG) == "1", reason="already inside a build-matrix child"
)


def report_path(directory: Path, build: str) -> Path:
    """Where the ``build`` child writes its JUnit report."""
    return directory / f"{build.replace(' ', '_')}.xml"


def passed_tests(report: Path) -> set[str]:
    """'classname::name' of every test the JUnit report shows passed (not failed, not skipped)."""
    passed = set()
    for case in ET.parse(report).getroot().iter("testcase"):
        if not any(child.tag in ("failure", "error", "skipped") for child in case):
            passed.add(f"{case.get('classname')}::{case.get('name')}")
    return passed


#: Runs a child and records how it ended: ``python -c WRAPPER OWNER RC OUT cmd...`` writes
#: the child's output to OUT, then its exit code to RC (last, so RC's presence means
#: done). The child runs in its own process group, and the wrapper ends that group
#: when the run that started it ends for any reason: when OWNER (the pytest process
#: that owns the run: xdist's controller, or the only process) is gone (``-x``, Ctrl-C,
#: a crash, a kill), or when the wrapper itself is sent SIGTERM (``stop_children``).
#: Polled once a second. Its own stdin/stdout/stderr are /dev/null, so a stopped run
#: leaves no process holding the run's output pipe.
WRAPPER = (
    "import os, signal, subprocess, sys\n"
    "owner, rc, out, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]\n"
    "def alive(pid):\n"
    "    try:\n"
    "        os.kill(pid, 0)\n"
    "    except ProcessLookupError:\n"
    "        return False\n"
    "    return True\n"
    "stop = []\n"
    "signal.signal(signal.SIGTERM, lambda *_: stop.append(1))\n"
    "with open(out, 'w') as sink:\n"
    "    child = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT,\n"
    "                             stdin=subprocess.DEVNULL, start_new_session=True)\n"
    "    while True:\n"
    "        try:\n"
    "            code = child.wait(timeout=1.0)\n"
    "            break\n"
    "        except subprocess.TimeoutExpired:\n"
    "            if stop or not alive(owner):\n"
    "                os.killpg(child.pid, signal.SIGKILL)\n"
    "                child.wait()\n"
    "                sys.exit(1)\n"
    "with open(rc + '.tmp', 'w') as f:\n"
    "    f.write(str(code))\n"
    "os.replace(rc + '.tmp', rc)\n"
)
#: The children this process started (the one that starts them: see ``starts_here``).
_STARTED: dict[str, subprocess.Popen[bytes]] = {}


def matrix_dir() -> Path:
    """The folder of the children's reports, output and exit codes: one per test run,
    shared by every xdist worker of the run (``PYTEST_XDIST_TESTRUNUID``), else per
    process."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"pid{os.getpid()}"
    return Path(tempfile.gettempdir()) / f"build_matrix_{run}"


def run_owner() -> int:
    """The pid of the process whose end ends the run: xdist's controller (a worker's
    parent), or this process when there are no workers. O(1)."""
    return os.getppid() if "PYTEST_XDIST_WORKER" in os.environ else os.getpid()


def stop_children() -> None:
    """Ask every child this process started and that still runs to stop (SIGTERM to its
    wrapper, which kills the child's whole process group), and wait for them. O(1)."""
    for proc in _STARTED.values():
        if proc.poll() is None:
            proc.terminate()
    for proc in _STARTED.values():
        proc.wait()


def starts_here() -> bool:
    """Whether this process starts the children: the only one, or xdist's first worker
    (every worker collects this module; one must start them, whichever runs its tests)."""
    return os.environ.get("PYTEST_XDIST_WORKER", "gw0") == "gw0"


def start_children() -> None:
    """Start the three builds' children (once per test run; never inside a child). O(1).

    tests/conftest.py calls this right after collection and runs this module's
    tests last, so the children run beside the rest of the suite instead of
    the suite waiting for them. Each child runs under ``WRAPPER``, so that the
    tests below can wait for it from any process of the run.
    """
    if _STARTED or os.environ.get(CHILD_FLAG) == "1" or not starts_here():
        return
    directory = matrix_dir()
    shutil.rmtree(directory, ignore_errors=True)  # a stale folder of a reused pid
    directory.mkdir()
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
        for worker_only in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT"):
            env.pop(worker_only, None)  # a child is a plain pytest run
        cmd = [sys.executable, *flags, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs"]
        cmd += ["-p", "no:xdist", f"--junitxml={report_path(directory, name)}"]
        cmd += [str(TESTS / f) for f in SUBSET]
        cmd += ["--deselect", BUILD_INDEPENDENT]
        if not optimized:
            cmd += ["--deselect", CHECKED_BUILD_INDEPENDENT]
        stem = directory / name.replace(" ", "_")
        wrapped = [sys.executable, "-c", WRAPPER, str(run_owner()), f"{stem}.rc", f"{stem}.out"]
        _STARTED[name] = subprocess.Popen(
            [*wrapped, *cmd],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )


def wait_for(build: str, timeout: float = 1500.0) -> tuple[int, str]:
    """The ``build`` child's exit code and output, once it has ended. A guard against a
    hung child, not a budget: the three builds share the cores with the suite.

    Raises:
        TimeoutError: it did not end within ``timeout`` seconds.
    """
    stem = matrix_dir() / build.replace(" ", "_")
    rc = Path(f"{stem}.rc")
    deadline = time.monotonic() + timeout
    while not rc.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the {build} child did not end in {timeout:.0f} s")
        time.sleep(1.0)
    return int(rc.read_text()), Path(f"{stem}.out").read_text()


@pytest.fixture(scope="module")
def reports() -> Iterator[Path]:
    start_children()  # in case collection did not (this module run alone under xdist)
    if not _STARTED and not matrix_dir().exists():
        pytest.fail("no process of this run started the build matrix")
    yield matrix_dir()
    stop_children()


@pytest.mark.parametrize("build", list(BUILDS))
def test_the_subset_passes_in_build(build: str, reports: Path) -> None:
    code, out = wait_for(build)
    assert code == 0, f"{build} build failed:\n{out}"
    summary = out.strip().splitlines()[-1]
    assert " passed" in summary and "failed" not in summary, out
    if build == "python -O":
        # The contract tests are skipped there (no contracts): say so, not more.
        assert "contracts exist only in the checked builds" in out
    else:
        assert " skipped" not in summary, f"{build} build skipped tests:\n{out}"
    passed = passed_tests(report_path(reports, build))
    for name in EVICTION_POLICIES:
        machine = f"test_stateful.TestCacheMachine_{name}::runTest"
        threads = f"test_threads::test_workers_share_a_cache_and_leave_it_consistent[{name}]"
        for test in (machine, threads):
            assert any(p.endswith(test) for p in passed), f"{build}: {test} did not pass"
