"""Run TLC: ``run_tlc`` is the package's one launcher (the ``tlc`` command, the
state-graph dump and trace validation use it); ``run_model`` runs one model of
the manifest with it and judges the result against the model's expectation.
``tlc_invocation`` (over ``jar.java_command``) builds every TLC command line the
package starts, the simulator's and the distributed server's too; the workers
and the version probe start from ``java_command`` itself."""

from __future__ import annotations

import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import patterns
from .config import read_config
from .jar import java_command, locate_jar, locate_java
from .manifest import PASS, Model
from .output import Outcome, TlcOutput, parse_output

#: A model may run this many times its budget before it is killed.
HARD_TIMEOUT_FACTOR = 4.0

#: Receives (model name, one line of TLC output) while TLC runs.
LineSink = Callable[[str, str], None]


@dataclass
class ModelResult:
    """The outcome of one model run, judged against the manifest."""

    model: Model
    output: TlcOutput
    result: str  # "pass", the violated invariant/property, or an outcome name
    ok: bool  # result == expectation, and within the time budget
    seconds: float
    constants: dict[str, str]
    timed_out: bool
    exit_code: int | None
    raw_output: str
    note: str  # why ok is False, when it is

    @property
    def within_budget(self) -> bool:
        """True if the run took no longer than the model's budget."""
        return self.seconds <= self.model.budget_seconds


def tlc_command(java: Path, jar: Path, model: Model, workers: int, metadir: Path) -> list[str]:
    """The command line that checks model (run it inside the tla/ directory)."""
    return tlc_invocation(
        java,
        jar,
        model.spec,
        model.config,
        workers=workers,
        metadir=metadir,
        check_deadlock=model.check_deadlock,
    )


def tlc_invocation(
    java: Path,
    jar: Path,
    spec: str,
    config: str,
    *,
    workers: int | None,
    metadir: Path,
    check_deadlock: bool = True,
    dump: Path | None = None,
    mode: Sequence[str] = (),
    main_class: str = "tlc2.TLC",
    properties: Sequence[str] = (),
) -> list[str]:
    """The one way this package starts TLC on a spec: check ``spec`` (a root module
    file) with ``config``, both relative to the directory TLC runs in.

    ``dump`` asks TLC to write the state graph there (``-dump dot,actionlabels``);
    ``mode`` adds a mode's own options (``simulate.simulation_command``);
    ``main_class`` and ``properties`` start the distributed server instead
    (``distributed.server_command``); ``workers=None`` leaves ``-workers`` out
    (the server's workers are processes; a simulation runs one thread).
    """
    # metadir is a fresh directory per run: the extracted standard modules go there too.
    command = java_command(java, jar, main_class, properties, tmpdir=metadir)
    if dump is not None:
        command += ["-dump", "dot,actionlabels", str(dump)]
    command += list(mode)
    if workers is not None:
        command += ["-workers", str(workers)]
    command += [
        "-metadir",
        str(metadir),  # keep TLC's states/ out of the source tree
        "-config",
        config,
    ]
    if not check_deadlock:
        command.append("-deadlock")  # this build's way to turn deadlock checking off
    command.append(spec)
    return command


@dataclass
class TlcRun:
    """One TLC process: its parsed and raw output and how it ended."""

    output: TlcOutput
    raw_output: str
    exit_code: int | None
    timed_out: bool  # killed after ``timeout`` seconds
    seconds: float


def run_tlc(
    spec: str,
    config: str,
    cwd: Path,
    *,
    workers: int = 1,
    check_deadlock: bool = True,
    dump: Path | None = None,
    timeout: float | None = None,
    java: Path | None = None,
    jar: Path | None = None,
    label: str = "",
    on_line: LineSink | None = None,
    relay_all: bool = False,
) -> TlcRun:
    """Run TLC on ``spec`` with ``config`` inside ``cwd`` and parse what it printed.

    The single launcher of the package (``embedding-cache tlc``, the state-graph
    dump and trace validation all come here): java and the jar are located
    unless given; TLC's metadata goes to a temporary directory removed
    afterwards; stdout and stderr are captured together, and lines are relayed
    to ``on_line(label, line)`` as they come (progress lines only, unless
    ``relay_all``); after ``timeout`` seconds TLC is killed and the run marked
    timed out. O(output size).

    Raises:
        TlcSetupError: java or the TLC jar cannot be found.
    """
    java = locate_java() if java is None else java
    jar = locate_jar() if jar is None else jar
    lines: list[str] = []
    timed_out = threading.Event()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"tlc-{label or Path(spec).stem}-") as metadir:
        command = tlc_invocation(
            java,
            jar,
            spec,
            config,
            workers=workers,
            metadir=Path(metadir),
            check_deadlock=check_deadlock,
            dump=dump,
        )
        proc = subprocess.Popen(
            command,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )

        def kill() -> None:
            timed_out.set()
            proc.kill()

        watchdog = threading.Timer(timeout, kill) if timeout is not None else None
        if watchdog is not None:
            watchdog.start()
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                line = line.rstrip("\n")
                lines.append(line)
                if on_line is not None and (relay_all or patterns.PROGRESS_LINE.match(line)):
                    on_line(label, line)
            exit_code = proc.wait()
        finally:
            if watchdog is not None:
                watchdog.cancel()
            if proc.poll() is None:  # interrupted: do not leave TLC running
                proc.kill()
                proc.wait()
    raw = "\n".join(lines) + "\n"
    return TlcRun(parse_output(raw), raw, exit_code, timed_out.is_set(), time.monotonic() - start)


def judge(model: Model, output: TlcOutput, properties: list[str]) -> str:
    """Name the run's result the way the manifest names expectations.

    TLC does not say which temporal property failed; when the config checks
    exactly one property, it is that one (bug models check one each).
    """
    if output.outcome is Outcome.PASS:
        return PASS
    if output.violated is not None:
        return output.violated
    if output.outcome is Outcome.TEMPORAL and len(properties) == 1:
        return properties[0]
    return str(output.outcome)


def run_model(
    model: Model,
    tla_dir: Path,
    java: Path,
    jar: Path,
    workers: int,
    on_line: LineSink | None = None,
    relay_all: bool = False,
) -> ModelResult:
    """Run TLC on model, relaying progress lines to on_line, and judge it."""
    config = read_config(tla_dir / model.config)
    run = run_tlc(
        model.spec,
        model.config,
        tla_dir,
        workers=workers,
        check_deadlock=model.check_deadlock,
        timeout=model.budget_seconds * HARD_TIMEOUT_FACTOR,
        java=java,
        jar=jar,
        label=model.name,
        on_line=on_line,
        relay_all=relay_all,
    )
    seconds, output, raw, exit_code = run.seconds, run.output, run.raw_output, run.exit_code
    timed_out = run.timed_out
    result = "timeout" if timed_out else judge(model, output, config.properties)
    note = ""
    if result != model.expect:
        note = f"expected {model.expect}, got {result}"
    elif seconds > model.budget_seconds:
        note = f"over budget: {seconds:.1f} s > {model.budget_seconds:g} s"
    return ModelResult(
        model=model,
        output=output,
        result=result,
        ok=not note,
        seconds=seconds,
        constants=config.constants,
        timed_out=timed_out,
        exit_code=exit_code,
        raw_output=raw,
        note=note,
    )
