"""A TLC java process whose output is collected by a thread while it runs.

The distributed server, its workers and the simulation batches need what the
one launcher (``runner.run_tlc``) does not offer: other main classes
(``tlc2.tool.distributed.TLCServer``/``TLCWorker``), system properties, and
waiting for a line (the server's "ready") while the process keeps running.
"""

from __future__ import annotations

import re
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

#: Receives (label, one line of output) while a process runs.
LineSink = Callable[[str, str], None]


class JavaProcess:
    """One started process; its stdout+stderr lines accumulate in ``lines``."""

    def __init__(
        self,
        command: list[str],
        cwd: Path | None = None,
        *,
        label: str = "",
        on_line: LineSink | None = None,
    ) -> None:
        """Start ``command`` in ``cwd``; a daemon thread reads its output. O(1)."""
        self.command = command
        self.label = label
        self.lines: list[str] = []
        self._on_line = on_line
        self._changed = threading.Condition()
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            command,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        """Collect lines until end of output, waking waiters on each line."""
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
            if self._on_line is not None:
                self._on_line(self.label, line)
        with self._changed:
            self._changed.notify_all()

    def wait_for(self, pattern: re.Pattern[str], timeout: float) -> str | None:
        """The first output line matching ``pattern``, waiting up to ``timeout``
        seconds; None if the process ended or the time ran out first.
        O(lines) per wake-up."""
        deadline = time.monotonic() + timeout
        seen = 0
        with self._changed:
            while True:
                for line in self.lines[seen:]:
                    if pattern.search(line):
                        return line
                seen = len(self.lines)
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._reader.is_alive():
                    return None
                self._changed.wait(min(remaining, 0.5))

    def wait(self, timeout: float | None) -> bool:
        """Wait for the process to end; False if it still runs after ``timeout``."""
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        self._reader.join(timeout=5)
        return True

    def stop(self) -> None:
        """Kill the process if it still runs, and reap it. O(1)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._reader.join(timeout=5)

    @property
    def text(self) -> str:
        """Everything printed so far, one string."""
        with self._changed:
            return "\n".join(self.lines) + "\n"

    @property
    def seconds(self) -> float:
        """Seconds since the process started."""
        return time.monotonic() - self.started
