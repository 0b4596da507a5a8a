"""Runaway planted code is stopped, and the message names the bug and the step.

No TLC: the replay runs on an excerpt of MCSmoke's state graph (data/), and a
trace recording that gives up is never validated.
"""

from __future__ import annotations

import resource
import time
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

import pytest

from embedding_cache.policies import FifoPolicy
from embedding_cache_checker.tlc.manifest import find_tla_dir
from embedding_cache_checker.verify import step_planted
from embedding_cache_checker.verify.bounded import Limits, Unit, run_bounded
from embedding_cache_checker.verify.graph_dump import DumpedModel
from embedding_cache_checker.verify.options import Job, VerifyOptions
from embedding_cache_checker.verify.planted import PlantedBug
from embedding_cache_checker.verify.report import VerifyReport
from embedding_cache_checker.verify.state_graph import load_dot
from embedding_cache_checker.verify.verdicts import step_ok

EXCERPT = Path(__file__).parent / "data" / "smoke_excerpt.dot"
#: Small limits, so a runaway is stopped within a few seconds.
SMALL = Limits(seconds=2.0, megabytes=200)


class _CyclicQueue(OrderedDict[str, int]):
    """A queue whose walk never ends, as a linked list turned into a cycle: every walk
    of it (``abstract()``'s included) goes round forever, growing whatever it builds."""

    def __iter__(self) -> Iterator[str]:
        while True:
            yield from list(super().__iter__()) or ["loop"]


class RunawayFifo(FifoPolicy):
    """fifo whose queue is a cycle: ``abstract()`` walks it forever."""

    def __init__(self, num_blocks: int = 0) -> None:
        super().__init__(num_blocks)
        self.queue = _CyclicQueue()


RUNAWAY = PlantedBug(
    "RunawayAbstract",
    "fifo",
    "policy",
    "mark_ready",
    frozenset(),
    None,
    (("alloc", "a", 1), ("mark_ready", "a")),
    broken_policy=RunawayFifo,
    blind=frozenset({"contracts", "crosshair"}),
    why_blind="a test's runaway",
)


def _excerpt(name: str) -> DumpedModel:
    """MCSmoke's graph excerpt (fifo, keys k1 k2, 3 blocks, pin depth 2), named ``name``."""
    return DumpedModel(name, load_dot(EXCERPT), ["k1", "k2"], 3, 2, 0.0)


def test_a_runaway_bug_gives_up_naming_the_bug_and_the_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(step_planted, "for_policy", lambda _policy, _layer=None: (RUNAWAY,))
    monkeypatch.setattr(step_planted, "_crosshair_run", lambda _job: None)
    options = VerifyOptions(tla_dir=find_tla_dir(), steps=("planted",), policies=("fifo",))
    messages: list[str] = []
    job = Job(options, VerifyReport(policies=("fifo",)), messages.append)
    job.dumped["fifo"] = {options.plan("fifo").planted: _excerpt(options.plan("fifo").planted)}
    start = time.monotonic()
    step_planted.run_planted(job, SMALL)
    assert time.monotonic() - start < 15  # two units, each stopped within its 2 s
    [result] = job.report.planted
    assert result.replay is False and result.traces is False  # gave up: not caught
    for step in ("replay [fifo]", "traces [fifo]"):
        said = [n for n in result.notes if f"planted bug RunawayAbstract, step {step}:" in n]
        assert len(said) == 1, result.notes
        assert " gave up after " in said[0] and " MB (over its " in said[0]
        assert any(m.startswith(f"planted bug RunawayAbstract, step {step}") for m in messages)
    job.report.seconds["planted"] = 1.0
    assert step_ok(job.report, "planted") is False


def _spin() -> None:
    while True:
        pass


def _hog() -> list[bytes]:
    hoard = []
    while True:
        hoard.append(b"x" * (1 << 20))


def _fail() -> None:
    raise ValueError("no such thing")


def test_each_limit_stops_a_unit_and_finished_units_keep_their_order() -> None:
    # The hog has its own run with a long time limit: on a loaded machine a forked
    # child may wait seconds for a core, and the memory limit, not the clock, must be
    # what stops it (a shared 3 s limit failed that way under load).
    units = [
        Unit("Spin", "replay [fifo]", _spin),
        Unit("Sum", "replay [fifo]", lambda: sum(range(10))),
        Unit("Fail", "traces [gdsf]", _fail),
    ]
    start = time.monotonic()
    spin, total, fail = run_bounded(units, Limits(seconds=3.0, megabytes=4_000), workers=2)
    assert time.monotonic() - start < 15
    assert spin.gave_up and "time limit" in str(spin.stopped) and spin.seconds >= 3.0
    assert spin.message.startswith("planted bug Spin, step replay [fifo]: gave up after ")
    assert total.value == 45 and not total.gave_up and total.error is None
    assert fail.error == "ValueError: no such thing" and not fail.gave_up
    hogs = [Unit("Hog", "traces [gdsf]", _hog), Unit("Sum", "traces [gdsf]", lambda: 7)]
    hog, seven = run_bounded(hogs, Limits(seconds=120.0, megabytes=40), workers=2)
    assert hog.gave_up and hog.stopped == "over its 40 MB memory limit"
    assert hog.megabytes > 40 and hog.message.endswith("MB (over its 40 MB memory limit)")
    assert seven.value == 7 and not seven.gave_up


def _spin_on_one_cpu_second() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (1, 2))  # what run_bounded sets, made shorter
    _spin()


def test_a_unit_ended_by_its_cpu_limit_gives_up() -> None:
    # The wall-clock limit is far away: the child's RLIMIT_CPU (SIGXCPU) ends it.
    [spin] = run_bounded([Unit("Spin", "replay [fifo]", _spin_on_one_cpu_second)], Limits(60, 100))
    assert spin.gave_up and spin.stopped == "over its CPU time limit (signal SIGXCPU)"
    assert spin.seconds < 30
