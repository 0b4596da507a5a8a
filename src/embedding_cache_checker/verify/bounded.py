"""Run units of possibly runaway code in child processes, bounded in time and memory.

A planted bug runs policy code that may never return (a broken linked structure
turned into a cycle: ``abstract()`` walked it forever, and the main job was
killed only once it had taken most of the machine's memory, with no line naming
the bug: docs/MEASURED.md, "Planted bugs' replay limits"). Each unit here runs in a forked
child (so it sees the parent's objects, a dumped state graph included, without
copying them), at most ``workers`` at a time, and is stopped when it exceeds its
``Limits``:

* time: the child's CPU time is capped with ``RLIMIT_CPU`` (SIGXCPU ends it, and no
  ``except`` in the code under test can swallow that), and the parent kills it
  (SIGKILL) once its wall-clock time is over the limit (a child that sleeps or waits
  uses no CPU);
* memory: the parent polls the child's resident set and kills it once it has grown
  more than ``megabytes`` over the parent's at the fork (a limit on the address space
  would raise ``MemoryError`` instead, which code under test may catch and report as
  an ordinary result, such as a replay mismatch).

The conformance step runs each replay of the real code here too (``step_models``),
for a core of its own: the main job's lanes are threads of one process. A unit's
result travels back pickled through a pipe. Every outcome records the
unit's wall seconds and peak memory growth. Fork is POSIX-only; the parent forks
from the thread that calls ``run_bounded``.
"""

from __future__ import annotations

import math
import os
import pickle
import resource
import select
import signal
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

#: How often (seconds) the parent looks at its running children.
POLL_SECONDS = 0.05
#: Bytes per page, for /proc/PID/statm.
_PAGE = os.sysconf("SC_PAGE_SIZE")
#: Bytes per megabyte.
_MB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """How long and how much memory one unit may take."""

    #: Wall-clock seconds, and CPU seconds (rounded up), per unit.
    seconds: float
    #: Megabytes the unit's resident set may grow over the parent's at the fork.
    megabytes: int


@dataclass(frozen=True)
class Unit:
    """One piece of work: what it is about (for the message when it gives up) and the
    call that does it (its result must pickle)."""

    bug: str
    step: str
    run: Callable[[], Any]
    #: What ``bug`` names, in the message of a unit that gave up.
    kind: str = "planted bug"


@dataclass
class UnitOutcome:
    """What became of one unit: its value, the error it raised, or why it was stopped."""

    unit: Unit
    value: Any = None
    #: ``Type: message`` of the exception the unit raised, if it raised one.
    error: str | None = None
    #: Why the unit was stopped ("over its 5 s time limit", ...); None when it finished.
    stopped: str | None = None
    seconds: float = 0.0
    #: Peak growth of the unit's resident set over the parent's, in megabytes.
    megabytes: float = 0.0

    @property
    def gave_up(self) -> bool:
        """True when the unit was stopped before it finished. O(1)."""
        return self.stopped is not None

    @property
    def message(self) -> str:
        """The line that names the bug and the step, for a unit that gave up. O(1)."""
        return (
            f"{self.unit.kind} {self.unit.bug}, step {self.unit.step}: gave up after "
            f"{self.seconds:.1f} s / {self.megabytes:.0f} MB ({self.stopped})"
        )


def _rss_bytes(pid: int) -> int:
    """The resident set of process ``pid`` (0 once it is gone). O(1)."""
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _child(run: Callable[[], Any], out: int, limits: Limits) -> None:
    """The child's side: cap CPU time, run, send the pickled result, exit. Never returns."""
    try:
        cpu = max(1, math.ceil(limits.seconds))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        try:
            payload = pickle.dumps(("ok", run()))
        except Exception as exc:  # the unit's own failure is a result, not a crash
            payload = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"[:500]))
        with os.fdopen(out, "wb") as pipe:
            pipe.write(payload)
    finally:
        os._exit(0)  # no atexit handlers, no flushing of the parent's buffers


@dataclass
class _Running:
    """A child the parent watches."""

    index: int
    unit: Unit
    pid: int
    fd: int
    start: float
    baseline: int  # the parent's resident set at the fork, bytes
    data: bytearray = field(default_factory=bytearray)
    peak: int = 0  # the largest growth seen, bytes
    stopped: str | None = None


def _start(index: int, unit: Unit, limits: Limits) -> _Running:
    baseline = _rss_bytes(os.getpid())
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child (coverage does not follow it)
        os.close(read_fd)
        _child(unit.run, write_fd, limits)
    os.close(write_fd)
    return _Running(index, unit, pid, read_fd, time.monotonic(), baseline)


def _watch(child: _Running, limits: Limits) -> None:
    """Kill ``child`` if it is over a limit (noting which). O(1)."""
    if child.stopped is not None:
        return
    child.peak = max(child.peak, _rss_bytes(child.pid) - child.baseline)
    if time.monotonic() - child.start > limits.seconds:
        child.stopped = f"over its {limits.seconds:g} s time limit"
    elif child.peak > limits.megabytes * _MB:
        child.stopped = f"over its {limits.megabytes} MB memory limit"
    else:
        return
    os.kill(child.pid, signal.SIGKILL)


def _finish(child: _Running) -> UnitOutcome:
    """Reap ``child`` and read what it sent. O(its result's size)."""
    _, status, usage = os.wait4(child.pid, 0)
    os.close(child.fd)
    seconds = time.monotonic() - child.start
    # ru_maxrss (KB) counts the pages the child shares with the parent since the fork.
    peak = max(child.peak, usage.ru_maxrss * 1024 - child.baseline, 0)
    outcome = UnitOutcome(child.unit, seconds=seconds, megabytes=peak / _MB)
    if child.stopped is None and child.data:
        kind, value = pickle.loads(bytes(child.data))
        if kind == "ok":
            outcome.value = value
        else:
            outcome.error = str(value)
        return outcome
    if child.stopped is None and os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        cause = "over its CPU time limit" if sig == signal.SIGXCPU else "killed"
        child.stopped = f"{cause} (signal {signal.Signals(sig).name})"
    outcome.stopped = child.stopped or f"exited with status {os.waitstatus_to_exitcode(status)}"
    return outcome


def _read(child: _Running) -> bool:
    """Read what ``child`` has sent; True at end of file (it is done). O(bytes read)."""
    chunk = os.read(child.fd, 1 << 16)
    child.data += chunk
    return not chunk


def run_bounded(units: Sequence[Unit], limits: Limits, workers: int = 1) -> list[UnitOutcome]:
    """Run every unit in its own child, at most ``workers`` at a time, each stopped when
    over ``limits``; their outcomes in the order of ``units``. O(the units' work), plus a
    fork and a poll every ``POLL_SECONDS`` per unit."""
    todo = deque(enumerate(units))
    running: dict[int, _Running] = {}
    outcomes: list[UnitOutcome | None] = [None] * len(units)
    while todo or running:
        while todo and len(running) < max(1, workers):
            index, unit = todo.popleft()
            child = _start(index, unit, limits)
            running[child.fd] = child
        ready, _, _ = select.select(list(running), [], [], POLL_SECONDS)
        for fd in ready:
            child = running[fd]
            if _read(child):
                del running[fd]
                outcomes[child.index] = _finish(child)
        for child in running.values():
            _watch(child, limits)
    return [o for o in outcomes if o is not None]
