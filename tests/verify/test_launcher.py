"""``tlc.runner.run_tlc``, the model check that the tlc command, the state-graph dump and
trace validation share, started by the package's one launcher (``tlc.process.TlcProcess``):
its command line, dump, deadlock switch and hard timeout."""

from __future__ import annotations

from pathlib import Path

import pytest

from embedding_cache_checker.tlc.cluster import server_process, worker_process
from embedding_cache_checker.tlc.output import TlcOutcome
from embedding_cache_checker.tlc.process import check_command, command_line
from embedding_cache_checker.tlc.runner import run_tlc
from embedding_cache_checker.tlc.simulate import simulation_batch
from embedding_cache_checker.verify.state_graph import load_dot

#: Counts to 3 and stops: a deadlock unless deadlock checking is off.
STOPS = """---- MODULE Stops ----
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x < 3 /\\ x' = x + 1
====
"""
#: Counts for ever: only the timeout ends it.
FOREVER = """---- MODULE Forever ----
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x' = x + 1
====
"""
CONFIG = "INIT Init\nNEXT Next\n"


def _spec(tmp_path: Path, text: str) -> str:
    name = text.split()[2]
    (tmp_path / f"{name}.tla").write_text(text)
    (tmp_path / f"{name}.cfg").write_text(CONFIG)
    return name


def test_command_line() -> None:
    java, jar, meta = Path("/j/java"), Path("/t/tla2tools.jar"), Path("/m")
    base = command_line(java, jar, check_command("M.tla", "M.cfg", workers=2, metadir=meta))
    assert base == [
        "/j/java",
        "-XX:+UseParallelGC",
        "-Djava.io.tmpdir=/m",  # TLC unpacks TLC.tla etc. there: its own, not a shared /tmp
        "-cp",
        "/t/tla2tools.jar",
        "tlc2.TLC",
        "-workers",
        "2",
        "-metadir",
        "/m",
        "-config",
        "M.cfg",
        "M.tla",
    ]
    dump = command_line(
        java,
        jar,
        check_command(
            "M.tla", "M.cfg", workers=1, metadir=meta, check_deadlock=False, dump=Path("g")
        ),
    )
    assert dump[6:9] == ["-dump", "dot,actionlabels", "g"]
    assert dump[-2:] == ["-deadlock", "M.tla"]


def test_every_tlc_command_line_starts_the_same_way() -> None:
    """Server, worker and simulator are built by the one builder: same java, collector, jar."""
    java, jar, meta = Path("/j/java"), Path("/t/tla2tools.jar"), Path("/m")
    head = ["/j/java", "-XX:+UseParallelGC"]
    server = command_line(
        java, jar, server_process("M.tla", "M.cfg", port=1, hostname=None, metadir=meta)
    )
    worker = command_line(
        java, jar, worker_process("10.0.0.1", port=1, hostname="h", threads=3, tmpdir=Path("/w"))
    )
    batch = simulation_batch(
        "M.tla", "M.cfg", depth=9, seed=4, traces=2, metadir=meta, check_deadlock=False
    )
    simulation = command_line(java, jar, batch)
    for command, main_class in (
        (server, "tlc2.tool.distributed.TLCServer"),
        (worker, "tlc2.tool.distributed.TLCWorker"),
        (simulation, "tlc2.TLC"),
    ):
        assert command[:2] == head
        cp = command.index("-cp")
        assert command[cp + 1 : cp + 3] == ["/t/tla2tools.jar", main_class]
    assert "-workers" not in server and "-workers" not in simulation
    # Each TLC process unpacks the standard modules into a directory of its own: two
    # processes sharing /tmp race on TLC.tla (one deletes it while the other parses it).
    assert "-Djava.io.tmpdir=/m" in server and "-Djava.io.tmpdir=/m" in simulation
    assert "-Djava.io.tmpdir=/w" in worker
    assert server[-1] == "M.tla" and server[-3:-1] == ["-config", "M.cfg"]
    assert worker[-1] == "10.0.0.1" and "-Dtlc2.tool.distributed.TLCWorker.threadCount=3" in worker
    assert simulation[-2:] == ["-deadlock", "M.tla"]
    assert simulation[simulation.index("-simulate") + 1] == "num=2"
    assert simulation[simulation.index("-depth") + 1] == "9"


@pytest.mark.tlc
def test_deadlock_reported_unless_switched_off(tla_dir: Path, tmp_path: Path) -> None:
    name = _spec(tmp_path, STOPS)
    run = run_tlc(f"{name}.tla", f"{name}.cfg", tmp_path)
    assert run.output.outcome is TlcOutcome.DEADLOCK and not run.timed_out
    assert [step.state["x"] for step in run.output.trace] == ["0", "1", "2", "3"]
    run = run_tlc(f"{name}.tla", f"{name}.cfg", tmp_path, check_deadlock=False)
    assert run.output.outcome is TlcOutcome.PASS and run.exit_code == 0
    assert run.output.distinct_states == 4
    assert not list(tmp_path.glob("states*")), (
        "TLC's metadata must not land in the spec's directory"
    )


@pytest.mark.tlc
def test_dump_writes_the_state_graph(tla_dir: Path, tmp_path: Path) -> None:
    name = _spec(tmp_path, STOPS)
    dot = tmp_path / "graph.dot"
    lines: list[tuple[str, str]] = []
    run = run_tlc(
        f"{name}.tla",
        f"{name}.cfg",
        tmp_path,
        check_deadlock=False,
        dump=dot,
        label="stops",
        on_line=lambda label, line: lines.append((label, line)),
    )
    assert run.output.outcome is TlcOutcome.PASS
    graph = load_dot(dot)
    assert sorted(str(s["x"]) for s in graph.states.values()) == ["0", "1", "2", "3"]
    assert len(graph.edges) == 3 and len(graph.initial) == 1
    assert lines and all(label == "stops" for label, _ in lines)  # progress relayed
    assert any(line.startswith("Model checking completed") for _, line in lines)


@pytest.mark.tlc
def test_timeout_kills_tlc(tla_dir: Path, tmp_path: Path) -> None:
    name = _spec(tmp_path, FOREVER)
    run = run_tlc(f"{name}.tla", f"{name}.cfg", tmp_path, timeout=3.0)
    assert run.timed_out
    assert run.output.outcome is TlcOutcome.INCOMPLETE
    assert run.exit_code is not None and run.exit_code != 0
