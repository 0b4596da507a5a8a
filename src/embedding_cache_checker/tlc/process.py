"""The package's one launcher of TLC: :class:`TlcProcess`, started from a :class:`TlcCommand`.

Every TLC process the package starts to check or serve a spec is one: a model
check (``runner.run_tlc``, which the ``tlc`` command, the state-graph dump and
trace validation use), each simulation batch (``simulate.run_simulation``),
the distributed server and its workers (``distributed``). A
:class:`TlcCommand` says which main class of the jar runs, with which ``-D``
properties and arguments, and the process's own ``java.io.tmpdir``, which it
cannot leave out: TLC 2.15 unpacks the standard modules into that directory
and deletes them on exit, so processes sharing one race (``jar.java_command``).
:func:`command_line` builds the java command line over ``jar.java_command``;
:class:`TlcProcess` starts it and collects its output on a thread while it
runs (a caller may wait for a line, as the distributed server's "ready",
while the process keeps running).

The modules live in subfolders of tla/ (core/, policies/<policy>/, trace/,
models/, ...): SANY finds a module named in EXTENDS or INSTANCE in the root
module's folder, then in each folder of the Java system property
``TLA-Library`` (``os.pathsep``-separated; read by TLC 2.15's
``util.SimpleFilenameToStream``). :class:`TlcProcess` passes it to every
process it starts in a directory (the tla directory, or a copy of it): every
folder under that directory holding a module (:func:`library_dirs`), found,
never listed, so a new policy's folder is picked up without an edit. A
distributed worker started without a directory reads the modules from its
server, which has the property.

The one TLC process started otherwise is the version probe
(``jar.tlc_version``): a banner printed at once, no module parsed (so no
tmpdir), run with ``subprocess.run`` over ``jar.java_command`` too.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from .jar import java_command

#: Receives (label, one line of output) while a process runs.
LineSink = Callable[[str, str], None]

#: The main class of a model check or a simulation.
CHECKER_CLASS = "tlc2.TLC"

#: The Java system property SANY reads its module search path from.
LIBRARY_PROPERTY = "TLA-Library"


@dataclass(frozen=True)
class TlcCommand:
    """A TLC process to start: ``main_class`` of the jar with ``properties``
    (``-D`` options) and ``arguments``, in its own ``tmpdir`` (``java.io.tmpdir``);
    a model check or simulation also names its root module, ``spec``, the last
    argument (its path and its ``-config`` argument's are relative to the
    directory it runs in: the tla directory)."""

    main_class: str
    arguments: tuple[str, ...]
    tmpdir: Path
    properties: tuple[str, ...] = ()
    spec: str | None = None
    #: A run expected to be short: the JVM's quick start (``jar.QUICK_START_OPTIONS``).
    quick_start: bool = False


def library_dirs(root: Path) -> tuple[Path, ...]:
    """Every folder under ``root`` (``root`` included) that holds a ``.tla`` module,
    sorted, as absolute paths. O(files under root)."""
    return tuple(sorted({path.parent.resolve() for path in root.rglob("*.tla")}))


def with_library(command: TlcCommand, root: Path) -> TlcCommand:
    """``command`` with the ``TLA-Library`` property naming :func:`library_dirs` of
    ``root`` (replacing one it had). O(files under root)."""
    folders = os.pathsep.join(str(d) for d in library_dirs(root))
    kept = tuple(p for p in command.properties if not p.startswith(f"-D{LIBRARY_PROPERTY}="))
    return replace(command, properties=(*kept, f"-D{LIBRARY_PROPERTY}={folders}"))


def in_module_folder(command: TlcCommand, directory: Path) -> tuple[TlcCommand, Path]:
    """``command`` as run from its root module's folder, and that folder: the module
    by its bare name, its ``-config`` file by absolute path (``directory`` is where
    both paths start). TLC 2.15 reads ``TLA-Library`` only for a root module named
    without a folder (given one, SANY searches that folder alone). O(arguments)."""
    if command.spec is None or Path(command.spec).parent == Path("."):
        return command, directory
    arguments = list(command.arguments)
    if "-config" in arguments:
        at = arguments.index("-config") + 1
        arguments[at] = str((directory / arguments[at]).resolve())
    spec = Path(command.spec)
    moved = replace(command, arguments=tuple(arguments), spec=spec.name)
    return moved, directory / spec.parent


def command_line(java: Path, jar: Path, command: TlcCommand) -> list[str]:
    """The java command line of ``command``: the jar's main class, its ``-D``
    properties, the arguments, then the root module. O(arguments)."""
    head = java_command(
        java,
        jar,
        command.main_class,
        command.properties,
        tmpdir=command.tmpdir,
        quick_start=command.quick_start,
    )
    return [*head, *command.arguments, *([] if command.spec is None else [command.spec])]


def check_command(
    spec: str,
    config: str,
    *,
    workers: int | None,
    metadir: Path,
    check_deadlock: bool = True,
    dump: Path | None = None,
    mode: Sequence[str] = (),
    main_class: str = CHECKER_CLASS,
    properties: Sequence[str] = (),
) -> TlcCommand:
    """TLC checking ``spec`` (a root module file) with ``config``, both relative to
    the directory TLC runs in; ``metadir`` (a fresh directory per run) holds TLC's
    states and is the process's tmpdir. O(1).

    ``dump`` asks TLC to write the state graph there (``-dump dot,actionlabels``);
    ``mode`` adds a mode's own options (``simulate.simulation_batch``);
    ``main_class`` and ``properties`` start the distributed server instead
    (``cluster.server_process``); ``workers=None`` leaves ``-workers`` out
    (the server's workers are processes; a simulation runs one thread).
    """
    arguments: list[str] = []
    if dump is not None:
        arguments += ["-dump", "dot,actionlabels", str(dump)]
    arguments += list(mode)
    if workers is not None:
        arguments += ["-workers", str(workers)]
    arguments += ["-metadir", str(metadir), "-config", config]  # states/ out of the source tree
    if not check_deadlock:
        arguments.append("-deadlock")  # this build's way to turn deadlock checking off
    return TlcCommand(main_class, tuple(arguments), metadir, tuple(properties), spec)


class TlcProcess:
    """One started TLC process; its stdout+stderr lines accumulate in ``lines``."""

    def __init__(
        self,
        java: Path,
        jar: Path,
        command: TlcCommand,
        cwd: Path | None = None,
        *,
        label: str = "",
        on_line: LineSink | None = None,
        library: Path | None = None,
    ) -> None:
        """Start ``command`` (:func:`command_line`) in ``cwd`` (from its root module's
        folder: :func:`in_module_folder`), its module search path the folders of
        ``library`` (default ``cwd``; :func:`with_library`); a daemon
        thread reads its output and relays each line to ``on_line(label, line)``.
        O(files under the library's root)."""
        root = library if library is not None else cwd
        if root is not None:
            command = with_library(command, root)
        if cwd is not None:
            command, cwd = in_module_folder(command, cwd)
        self.command = command_line(java, jar, command)
        self.label = label
        self.lines: list[str] = []
        self._on_line = on_line
        self._changed = threading.Condition()
        self.started = time.monotonic()
        #: CPU seconds (user + system, every thread) the process used, once ``wait``
        #: has seen it end; None before, or when another wait reaped it.
        self.cpu_seconds: float | None = None
        self.proc = subprocess.Popen(
            self.command,
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
        """Wait for the process to end; False if it still runs after ``timeout``. Once
        it has ended, reap it with ``os.wait4`` for its CPU time (``cpu_seconds``: what
        a budget is judged on, since wall time grows with the machine's load). Polls
        every 5 to 100 ms. O(run time / poll)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        pause = 0.005
        pid = self.proc.pid
        while self.proc.returncode is None:
            # WNOWAIT: see that it ended without reaping it, so wait4 can read its usage.
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                _, status, usage = os.wait4(pid, 0)
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                self.cpu_seconds = usage.ru_utime + usage.ru_stime
                break
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(pause)
            pause = min(0.1, pause * 2)
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
