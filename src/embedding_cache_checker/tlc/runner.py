"""Run one model: ``run_tlc`` checks a spec with TLC and parses what it printed;
``run_model`` runs one model of the manifest with it and judges the result
against the model's expectation. The process itself is started by the
package's one launcher, ``process.TlcProcess``, from a ``process.TlcCommand``
(``process.check_command``; ``process.command_line`` is its java command line)."""

from __future__ import annotations

import dataclasses
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from . import patterns
from .config import read_config
from .jar import locate_jar, locate_java
from .manifest import PASS, Model
from .output import TlcOutcome, TlcOutput, parse_output
from .process import LineSink, TlcProcess, check_command

#: A model may run this many times its budget before it is killed.
HARD_TIMEOUT_FACTOR = 4.0


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
    #: CPU seconds TLC used (every thread): what the budget is judged on. None when
    #: the run was killed (then ``timed_out`` says why).
    cpu_seconds: float | None = None


@dataclass
class TlcRun:
    """One TLC process: its parsed and raw output and how it ended."""

    output: TlcOutput
    raw_output: str
    exit_code: int | None
    timed_out: bool  # killed after ``timeout`` seconds
    seconds: float
    cpu_seconds: float | None = None  # TLC's CPU time (None: it was killed)


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
    quick_start: bool = False,
) -> TlcRun:
    """Run TLC on ``spec`` with ``config`` inside ``cwd`` and parse what it printed.

    One model check (``embedding-cache tlc``, the state-graph dump and trace
    validation all come here), started by the launcher (``process.TlcProcess``):
    java and the jar are located unless given; TLC's metadata and tmpdir are a
    temporary directory removed afterwards; stdout and stderr are captured
    together, and lines are relayed to ``on_line(label, line)`` as they come
    (progress lines only, unless ``relay_all``); after ``timeout`` seconds TLC
    is killed and the run marked timed out. ``quick_start``: a run expected to
    take seconds starts the JVM without its optimizing compiler
    (``jar.QUICK_START_OPTIONS``). O(output size).

    Raises:
        TlcSetupError: java or the TLC jar cannot be found.
    """
    java = locate_java() if java is None else java
    jar = locate_jar() if jar is None else jar
    relay = None if on_line is None else _progress_relay(on_line, relay_all)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"tlc-{label or Path(spec).stem}-") as metadir:
        command = check_command(
            spec,
            config,
            workers=workers,
            metadir=Path(metadir),
            check_deadlock=check_deadlock,
            dump=dump,
        )
        if quick_start:
            command = dataclasses.replace(command, quick_start=True)
        process = TlcProcess(java, jar, command, cwd, label=label, on_line=relay)
        try:
            finished = process.wait(timeout)
        finally:
            process.stop()  # after the timeout, or interrupted: do not leave TLC running
    raw = process.text
    seconds = time.monotonic() - start
    return TlcRun(
        parse_output(raw), raw, process.proc.returncode, not finished, seconds, process.cpu_seconds
    )


def _progress_relay(on_line: LineSink, relay_all: bool) -> LineSink:
    """``on_line`` for every line if ``relay_all``, else for TLC's progress lines only."""

    def relay(label: str, line: str) -> None:
        if relay_all or patterns.PROGRESS_LINE.match(line):
            on_line(label, line)

    return relay


def judge(model: Model, output: TlcOutput, properties: list[str]) -> str:
    """Name the run's result the way the manifest names expectations.

    TLC does not say which temporal property failed; when the config checks
    exactly one property, it is that one (bug models check one each).
    """
    if output.outcome is TlcOutcome.PASS:
        return PASS
    if output.violated is not None:
        return output.violated
    if output.outcome is TlcOutcome.TEMPORAL and len(properties) == 1:
        return properties[0]
    return str(output.outcome)


#: A model whose budget is at most this many seconds (the bug models') runs with the
#: JVM's quick start (``run_tlc``'s ``quick_start``).
QUICK_BUDGET_SECONDS = 30


def over_budget(model: Model, cpu_seconds: float | None) -> str:
    """Why a run of ``model`` that used ``cpu_seconds`` of TLC's CPU time is over its
    budget, or "" (also when the time is unknown: a killed run, judged as a timeout).

    The budget is judged on CPU time, not the wall clock: the wall clock grows with
    the machine's load, and a gate that flips with load would block good changes
    (beside the test suite, models within their CPU budgets ran far over them in wall
    time: docs/MEASURED.md, "The whole run within its 15 minutes"). The hard timeout
    (``HARD_TIMEOUT_FACTOR``) stays in wall time. O(1).
    """
    if cpu_seconds is None or cpu_seconds <= model.budget_seconds:
        return ""
    return f"over budget: {cpu_seconds:.1f} CPU s > {model.budget_seconds:g} s"


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
        quick_start=model.budget_seconds <= QUICK_BUDGET_SECONDS,
    )
    seconds, output, raw, exit_code = run.seconds, run.output, run.raw_output, run.exit_code
    timed_out = run.timed_out
    result = "timeout" if timed_out else judge(model, output, config.properties)
    cpu = run.cpu_seconds
    note = f"expected {model.expect}, got {result}" if result != model.expect else ""
    note = note or over_budget(model, cpu)
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
        cpu_seconds=cpu,
    )
