"""Run one model of the manifest with TLC and judge it against its expectation."""

from __future__ import annotations

import re
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .config import read_config
from .manifest import PASS, Model
from .output import Outcome, TlcOutput, parse_output

#: A model may run this many times its budget before it is killed.
HARD_TIMEOUT_FACTOR = 4.0

#: TLC output lines worth relaying while a model runs (its progress).
_PROGRESS_LINE = re.compile(
    r"^(Starting\.\.\.|Computing initial states|Finished computing|Progress\(|Checking \d+ branches"
    r"|Checking temporal|Finished checking temporal|Model checking completed|Error:"
    r"|\d[\d,]* states generated|Finished in)"
)

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
    command = [
        str(java),
        "-XX:+UseParallelGC",  # TLC's recommended collector for throughput
        "-cp",
        str(jar),
        "tlc2.TLC",
        "-workers",
        str(workers),
        "-metadir",
        str(metadir),  # keep TLC's states/ out of the source tree
        "-config",
        model.config,
    ]
    if not model.check_deadlock:
        command.append("-deadlock")  # this build's way to turn deadlock checking off
    command.append(model.spec)
    return command


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
    lines: list[str] = []
    timed_out = threading.Event()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"tlc-{model.name}-") as metadir:
        proc = subprocess.Popen(
            tlc_command(java, jar, model, workers, Path(metadir)),
            cwd=tla_dir,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )

        def kill() -> None:
            timed_out.set()
            proc.kill()

        watchdog = threading.Timer(model.budget_seconds * HARD_TIMEOUT_FACTOR, kill)
        watchdog.start()
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                line = line.rstrip("\n")
                lines.append(line)
                if on_line is not None and (relay_all or _PROGRESS_LINE.match(line)):
                    on_line(model.name, line)
            exit_code = proc.wait()
        finally:
            watchdog.cancel()
            if proc.poll() is None:  # interrupted: do not leave TLC running
                proc.kill()
                proc.wait()
    seconds = time.monotonic() - start
    raw = "\n".join(lines) + "\n"
    output = parse_output(raw)
    result = "timeout" if timed_out.is_set() else judge(model, output, config.properties)
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
        timed_out=timed_out.is_set(),
        exit_code=exit_code,
        raw_output=raw,
        note=note,
    )
