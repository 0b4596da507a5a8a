"""A test run that ends, for any reason, ends every process it started.

The build matrix (tests/test_builds.py) starts three child pytest runs right after
collection. A run stopped early (``-x`` at its first failure, Ctrl-C) must not leave
them behind burning the cores and holding the output pipe open. Each case runs a
small pytest that collects test_builds.py (so the children start) and a test that
fails at once, stops it, and looks for any process still carrying the run's marker.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
#: The environment variable every process of a probed run inherits.
MARKER = "EMBEDDING_CACHE_CLEANUP_PROBE"

pytestmark = pytest.mark.skipif(
    os.environ.get("EMBEDDING_CACHE_BUILD_MATRIX_CHILD") == "1",
    reason="inside a build-matrix child",
)


def marked_processes(tag: str) -> list[int]:
    """Pids of live processes whose environment carries ``MARKER=tag``. O(processes)."""
    needle = f"{MARKER}={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def wait_until_none(tag: str, seconds: float) -> list[int]:
    """The marked processes still alive after up to ``seconds`` (polled)."""
    deadline = time.monotonic() + seconds
    while (left := marked_processes(tag)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


#: The probe's failing test: it waits (up to a minute) until the build matrix's three
#: children exist, notes that in the file ``seen``, then fails; so the run is stopped
#: while the children run, and a probe that never saw them proves nothing.
FAILING_TEST = """
import os, time
from pathlib import Path

def test_fails() -> None:
    tag = os.environ["{marker}"].encode()
    deadline = time.monotonic() + 60.0
    while time.monotonic() < deadline:
        others = 0
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and int(entry.name) != os.getpid():
                try:
                    env = (entry / "environ").read_bytes().split(b"\\0")
                except OSError:
                    continue
                others += b"{marker}=" + tag in env
        if others >= 3:
            Path("{seen}").write_text("yes")
            break
        time.sleep(0.2)
    assert False
""".replace("{marker}", MARKER)


def probe_run(tmp_path: Path, extra: list[str]) -> tuple[subprocess.Popen[bytes], str]:
    """Start a pytest that collects the build matrix and a test that fails at once."""
    failing = tmp_path / "test_fails_once_the_matrix_runs.py"
    failing.write_text(FAILING_TEST.format(seen=tmp_path / "seen"))
    tag = uuid.uuid4().hex
    env = dict(os.environ, **{MARKER: tag})
    for name in [name for name in env if name.startswith("PYTEST_")]:
        del env[name]  # a plain run: not a worker of this one, nor sharing its matrix folder
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra]
    cmd += [str(failing), str(TESTS / "test_builds.py")]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return proc, tag


def started_children(tmp_path: Path, seconds: float = 90.0) -> bool:
    """Whether the probe's failing test saw the matrix's children running (within
    ``seconds``): else the probe proves nothing."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if (tmp_path / "seen").exists():
            return True
        time.sleep(0.2)
    return False


def test_a_run_stopped_at_its_first_failure_leaves_no_process(tmp_path: Path) -> None:
    proc, tag = probe_run(tmp_path, ["-x", "-p", "no:xdist"])
    assert started_children(tmp_path), "the probe's run never started the build matrix"
    assert proc.wait(timeout=120) == 1  # stopped at the failing test
    left = wait_until_none(tag, 10.0)
    assert not left, f"processes of a stopped run still alive: {left}"


def test_an_interrupted_run_leaves_no_process(tmp_path: Path) -> None:
    proc, tag = probe_run(tmp_path, ["-p", "no:xdist"])
    assert started_children(tmp_path), "the probe's run never started the build matrix"
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=120)
    left = wait_until_none(tag, 10.0)
    assert not left, f"processes of an interrupted run still alive: {left}"


def test_a_killed_run_leaves_no_process(tmp_path: Path) -> None:
    proc, tag = probe_run(tmp_path, ["-p", "no:xdist"])
    assert started_children(tmp_path), "the probe's run never started the build matrix"
    proc.kill()
    proc.wait(timeout=60)
    left = wait_until_none(tag, 10.0)
    assert not left, f"processes of a killed run still alive: {left}"
