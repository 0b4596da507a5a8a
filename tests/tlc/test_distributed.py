"""Distributed TLC on loopback: same states as one process, violations, errors."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import pytest

from embedding_cache_checker.tlc.cluster import (
    DistributedUnsupportedError,
    NoWorkersError,
    PortInUseError,
    ServerUnreachableError,
    check_port,
)
from embedding_cache_checker.tlc.distributed import (
    name_distributed_violation,
    run_distributed,
    run_worker,
)
from embedding_cache_checker.tlc.manifest import Model, find_tla_dir, load_manifest
from embedding_cache_checker.tlc.output import TlcOutcome, parse_output
from embedding_cache_checker.tlc.runner import run_tlc

DATA = Path(__file__).parent / "data" / "counterexample"
TLA_DIR = find_tla_dir()
MODELS = {m.name: m for m in load_manifest(TLA_DIR)}

#: The marks of a test that starts TLC.
needs_java = pytest.mark.skipif(
    shutil.which("java") is None and "JAVA_HOME" not in os.environ, reason="TLC needs java"
)


def free_port() -> int:
    """A port nothing listens on now (the OS's choice)."""
    with socket.socket() as s:
        s.bind(("", 0))
        return int(s.getsockname()[1])


def test_port_in_use_is_named_before_anything_starts() -> None:
    with socket.socket() as busy:
        busy.bind(("", 0))
        busy.listen()
        port = int(busy.getsockname()[1])
        with pytest.raises(PortInUseError, match=str(port)) as info:
            run_distributed(MODELS["MCSmoke"], TLA_DIR, workers=1, port=port)
        assert info.value.port == port
    check_port(port)  # free again


def test_property_expectations_are_refused() -> None:
    bug = next(m for m in MODELS.values() if "bug" in m.tags and m.expect.endswith("Prop"))
    with pytest.raises(DistributedUnsupportedError, match="PROPERTIES"):
        run_distributed(bug, TLA_DIR, workers=1, port=free_port())


def test_unnamed_violation_is_attributed_to_the_only_invariant() -> None:
    raw = (DATA / "distributed_invariant_server.out").read_text(encoding="utf-8")
    model = MODELS["MCBugDiscardKeepsBlocks"]
    output = name_distributed_violation(model, parse_output(raw), raw, ["BlockConservationInv"])
    assert output.outcome is TlcOutcome.INVARIANT
    assert output.violated == "BlockConservationInv"
    assert len(output.trace) == 2
    several = name_distributed_violation(model, parse_output(raw), raw, ["TypeOK", "Other"])
    assert several.violated == "unnamed violation"


@pytest.mark.tlc
@needs_java
def test_distributed_finds_the_same_states_as_one_process() -> None:
    model: Model = MODELS["MCSmoke"]
    single = run_tlc(model.spec, model.config, TLA_DIR, workers=1, label="single")
    result = run_distributed(model, TLA_DIR, workers=2, port=free_port())
    assert result.result.result == "pass", result.result.raw_output[-2000:]
    assert result.result.ok
    assert result.result.output.distinct_states == single.output.distinct_states
    assert result.registered >= 1
    data = result.to_json()
    assert data["mode"] == "distributed" and data["workers"] == 2
    assert data["unchecked_properties"]  # said, not hidden


@pytest.mark.tlc
@needs_java
def test_distributed_reports_a_bug_models_violation() -> None:
    model = MODELS["MCBugDiscardKeepsBlocks"]
    result = run_distributed(model, TLA_DIR, workers=1, port=free_port())
    assert result.result.result == model.expect, result.result.raw_output[-2000:]
    assert result.result.ok
    assert result.result.output.trace


@pytest.mark.tlc
@needs_java
def test_server_without_workers_times_out() -> None:
    with pytest.raises(NoWorkersError, match="no TLC worker registered"):
        run_distributed(MODELS["MCSmoke"], TLA_DIR, workers=0, port=free_port(), worker_timeout=3)


@pytest.mark.tlc
@needs_java
def test_worker_without_server_times_out() -> None:
    port = free_port()
    with pytest.raises(ServerUnreachableError, match=f"127.0.0.1:{port}"):
        run_worker("127.0.0.1", port=port, threads=1, connect_timeout=4)
