"""Distributed TLC: one ``TLCServer`` and workers that join it over Java RMI.

TLC 2.15 ships its own distributed mode: ``tlc2.tool.distributed.TLCServer``
holds the state queue and the fingerprint set, parses the spec and serves the
module files to its workers; each ``tlc2.tool.distributed.TLCWorker HOST``
looks the server up at ``rmi://HOST:PORT/TLCServerWORKER``, copies the
modules from it (a worker machine needs no tla/ directory, only Java and the
jar) and computes successor states. How the processes are configured and
started is ``cluster``'s; this module runs them and judges the result.

Measured limits of this TLC build (tests/tlc/test_distributed.py):

* **action properties are not checked**: a bug model whose only check is an
  action property (``MCBugEvictOneTooMany``) passes distributed and fails in
  one process. :func:`run_distributed` therefore refuses a model whose
  expectation is a property, and lists the properties it could not check;
* a violated invariant is not named (the server prints the behaviour without
  the worker's message); it is attributed when the config has one invariant;
* ``TLCGet``/``TLCSet`` are not supported (the replay models use them);
* the server waits forever for workers: :func:`run_distributed` times out.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import patterns
from .cluster import DEFAULT_PORT as DEFAULT_PORT  # re-exported for callers of run_distributed
from .cluster import DistributedError as DistributedError
from .cluster import (
    DistributedUnsupportedError,
    NoWorkersError,
    ServerStartError,
    ServerUnreachableError,
    check_port,
    server_process,
    worker_process,
)
from .config import read_config
from .jar import TlcSetupError, locate_jar, locate_java
from .manifest import Model
from .output import TlcOutcome, TlcOutput, parse_output, parse_trace
from .process import LineSink, TlcProcess
from .report import result_json
from .runner import HARD_TIMEOUT_FACTOR, ModelResult, judge

#: The result's ``mode`` in JSON.
MODE = "distributed"


@dataclass
class DistributedResult:
    """A distributed run: the same judged result as a single-process run, plus
    the mode, the number of workers and what could not be checked."""

    result: ModelResult
    workers: int
    port: int
    unchecked_properties: list[str] = field(default_factory=list)
    registered: int = 0  # workers that registered with the server

    def to_json(self) -> dict[str, Any]:
        """The result as ``report.result_json`` gives it, with the mode fields."""
        data = result_json(self.result)
        data.update(
            {
                "mode": MODE,
                "workers": self.workers,
                "registered_workers": self.registered,
                "port": self.port,
                "unchecked_properties": self.unchecked_properties,
            }
        )
        return data


def name_distributed_violation(
    model: Model, output: TlcOutput, raw: str, invariants: list[str]
) -> TlcOutput:
    """Complete what distributed TLC leaves out of a violation, in place.

    The server prints the behaviour without the worker's message: the
    behaviour is parsed, and the violation is the config's invariant when it
    has exactly one (outcome ``invariant``), a deadlock when it has none and
    deadlocks are checked; otherwise the outcome stays ``error`` with
    ``violated = "unnamed violation"``. O(output size).
    """
    if output.outcome is not TlcOutcome.ERROR or not output.message.startswith(
        patterns.UNNAMED_BEHAVIOUR
    ):
        return output
    output.trace = parse_trace(raw)
    if len(invariants) == 1:
        output.outcome, output.violated = TlcOutcome.INVARIANT, invariants[0]
    elif not invariants and model.check_deadlock:
        output.outcome = TlcOutcome.DEADLOCK
    else:
        output.violated = "unnamed violation"
    return output


def run_distributed(
    model: Model,
    tla_dir: Path,
    *,
    workers: int = 2,
    port: int = DEFAULT_PORT,
    worker_threads: int | None = 1,
    hostname: str = "127.0.0.1",
    timeout: float | None = None,
    ready_timeout: float = 120.0,
    worker_timeout: float = 60.0,
    java: Path | None = None,
    jar: Path | None = None,
    on_line: LineSink | None = None,
) -> DistributedResult:
    """Check ``model`` with a TLC server and ``workers`` local workers on loopback.

    The port is checked first; the server starts and, once ready, the workers
    (``worker_threads`` threads each); at least one must register within
    ``worker_timeout`` seconds. ``workers=0`` starts none (for workers on
    other machines: start them with ``embedding-cache tlc-worker``). The whole
    run is killed after ``timeout`` seconds (default: 4 times the model's
    budget) and is then judged ``timeout``. The result is judged like a
    single-process run (``runner.run_model``) except the time budget, which
    is reported, not enforced. O(TLC's run).

    Raises:
        PortInUseError: the port is taken (checked before anything starts).
        DistributedUnsupportedError: the model's expectation is an action or
            temporal property (not checked by distributed TLC 2.15).
        ServerStartError: the server ended before it was ready.
        NoWorkersError: no worker registered in time.
        TlcSetupError: java or the jar is missing.
    """
    if workers < 0:
        raise DistributedError("workers must be at least 0")
    config = read_config(tla_dir / model.config)
    if model.expect in config.properties:
        raise DistributedUnsupportedError(
            f"{model.name} expects property {model.expect} violated, but distributed TLC "
            f"2.15 does not check PROPERTIES; run it in one process (embedding-cache tlc)"
        )
    check_port(port)
    java = locate_java() if java is None else java
    jar = locate_jar() if jar is None else jar
    limit = model.budget_seconds * HARD_TIMEOUT_FACTOR if timeout is None else timeout
    started = time.monotonic()
    local: list[TlcProcess] = []
    with tempfile.TemporaryDirectory(prefix=f"tlc-dist-{model.name}-") as metadir:
        server = TlcProcess(
            java,
            jar,
            server_process(
                model.spec,
                model.config,
                port=port,
                hostname=hostname,
                metadir=Path(metadir),
                check_deadlock=model.check_deadlock,
            ),
            tla_dir,
            label=f"{model.name}/server",
            on_line=on_line,
        )
        try:
            if server.wait_for(patterns.SERVER_READY, ready_timeout) is None:
                server.stop()
                tail = "\n".join(line for line in server.lines[-8:] if line.strip())
                raise ServerStartError(
                    f"the TLC server for {model.name} ended or was not ready within "
                    f"{ready_timeout:g} s; its last output:\n{tail}",
                    server.text,
                )
            for i in range(workers):
                worker_tmp = Path(metadir) / f"worker{i + 1}"
                worker_tmp.mkdir()
                local.append(
                    TlcProcess(
                        java,
                        jar,
                        worker_process(
                            hostname,
                            port=port,
                            hostname=hostname,
                            threads=worker_threads,
                            tmpdir=worker_tmp,
                        ),
                        label=f"{model.name}/worker{i + 1}",
                        on_line=on_line,
                        library=tla_dir,  # the server's search path (workers fetch from it)
                    )
                )
            if (
                server.wait_for(patterns.WORKER_REGISTERED, worker_timeout) is None
                and server.proc.poll() is None
            ):
                raise NoWorkersError(
                    f"no TLC worker registered with the server on port {port} within "
                    f"{worker_timeout:g} s"
                    + ("" if workers else " (start workers with: embedding-cache tlc-worker HOST)")
                )
            remaining = max(0.0, limit - (time.monotonic() - started))
            timed_out = not server.wait(remaining)
            for worker in local:
                worker.wait(10.0)
        finally:
            for process in (server, *local):
                process.stop()
    seconds = time.monotonic() - started
    raw = server.text
    output = name_distributed_violation(model, parse_output(raw), raw, config.invariants)
    result = "timeout" if timed_out else judge(model, output, config.properties)
    notes = []
    if result != model.expect:
        notes.append(f"expected {model.expect}, got {result}")
    unchecked = list(config.properties)
    model_result = ModelResult(
        model=model,
        output=output,
        result=result,
        ok=not notes,
        seconds=seconds,
        constants=config.constants,
        timed_out=timed_out,
        exit_code=server.proc.returncode,
        raw_output=raw,
        note="; ".join(notes),
    )
    registered = sum(1 for line in server.lines if patterns.WORKER_REGISTERED.search(line))
    return DistributedResult(
        result=model_result,
        workers=workers,
        port=port,
        unchecked_properties=unchecked,
        registered=registered,
    )


def run_worker(
    host: str,
    *,
    port: int = DEFAULT_PORT,
    threads: int | None = None,
    hostname: str | None = None,
    connect_timeout: float = 60.0,
    java: Path | None = None,
    jar: Path | None = None,
    on_line: LineSink | None = None,
) -> int:
    """Join the TLC server at ``host`` as a worker and work until it is done.

    ``hostname`` is this machine's address as the server can reach it (the
    server calls back into the worker); ``threads`` defaults to the cores.
    Returns the worker's exit code. O(the server's run).

    Raises:
        ServerUnreachableError: no server answered within ``connect_timeout``
            seconds (TLC's worker itself would retry forever).
        TlcSetupError: java or the jar is missing.
    """
    java = locate_java() if java is None else java
    jar = locate_jar() if jar is None else jar
    with tempfile.TemporaryDirectory(prefix="tlc-worker-") as tmp:
        return _work(
            TlcProcess(
                java,
                jar,
                worker_process(
                    host, port=port, hostname=hostname, threads=threads, tmpdir=Path(tmp)
                ),
                label="worker",
                on_line=on_line,
            ),
            host,
            port,
            connect_timeout,
        )


def _work(worker: TlcProcess, host: str, port: int, connect_timeout: float) -> int:
    """Wait for ``worker`` to join the server at ``host:port``, then until it ends."""
    try:
        if worker.wait_for(patterns.WORKER_READY, connect_timeout) is None:
            if worker.proc.poll() is not None and not any(
                patterns.SERVER_UNREACHABLE.search(line) for line in worker.lines
            ):
                tail = "\n".join(worker.lines[-5:])
                raise ServerUnreachableError(
                    f"the TLC worker for {host}:{port} ended without joining:\n{tail}"
                )
            last = next(
                (
                    line
                    for line in reversed(worker.lines)
                    if patterns.SERVER_UNREACHABLE.search(line)
                ),
                "",
            )
            raise ServerUnreachableError(
                f"no TLC server answered at {host}:{port} within {connect_timeout:g} s"
                + (f" (TLC: {last.strip()})" if last else "")
                + "; is the server running, is the port right, and is it reachable "
                "(firewall, java.rmi.server.hostname on the server)?"
            )
        worker.wait(None)
        return worker.proc.returncode if worker.proc.returncode is not None else 1
    finally:
        worker.stop()


# -- the ``embedding-cache tlc-worker`` subcommand -------------------------------------------


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``tlc-worker`` with the CLI's subparsers."""
    parser = subparsers.add_parser(
        "tlc-worker",
        help="join a distributed TLC server as a worker",
        description=(
            "Start a TLC worker that joins the TLC server at HOST (started with "
            "embedding-cache tlc --distributed K) and computes states until the server "
            "is done. The worker copies the modules from the server: only Java and the "
            "TLC jar are needed here."
        ),
    )
    parser.add_argument("host", metavar="HOST", help="the server's address")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"the server's RMI port ({DEFAULT_PORT})"
    )
    parser.add_argument("--threads", type=int, default=None, help="worker threads (cores)")
    parser.add_argument(
        "--hostname",
        default=None,
        help="this machine's address as the server reaches it (java.rmi.server.hostname)",
    )
    parser.add_argument(
        "--connect-timeout",
        type=float,
        default=60.0,
        help="seconds to wait for the server before giving up (default 60)",
    )
    parser.set_defaults(func=worker_command_main)


def worker_command_main(args: argparse.Namespace) -> int:
    """Run ``embedding-cache tlc-worker``; return the exit code (2: cannot start/join)."""

    def relay(label: str, line: str) -> None:
        print(f"[{label}] {line}", file=sys.stderr, flush=True)

    try:
        return run_worker(
            args.host,
            port=args.port,
            threads=args.threads,
            hostname=args.hostname,
            connect_timeout=args.connect_timeout,
            on_line=relay,
        )
    except (DistributedError, TlcSetupError) as exc:
        print(f"embedding-cache tlc-worker: {exc}", file=sys.stderr)
        return 2
