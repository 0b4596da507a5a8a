"""State-graph replay (conformance link 1): a hand-made graph, then MCSmoke and MCReplayWide.

The unit tests replay a four-state graph written in TLC's notation (one key,
one block) on correct and deliberately wrong operations. The ``tlc`` tests
dump real graphs once per module and replay every edge on the real
transitions and with each planted bug swapped in (``planted_links``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from embedding_cache import transitions
from embedding_cache.errors import CacheError
from embedding_cache.state import CacheState
from embedding_cache.verify import planted_links
from embedding_cache.verify.graph_dump import DumpedModel, dump_state_graph
from embedding_cache.verify.planted import PLANTED, PlantedBug
from embedding_cache.verify.replay import REAL_OPERATIONS, ReplayReport, replay_graph
from embedding_cache.verify.state_graph import StateGraph
from embedding_cache.verify.tla_values import parse_state

# ---------------------------------------------------------------- a hand-made graph

#: Keys = {k1}, N = 1, MaxPins = 1. From Init the spec has exactly three steps
#: (Alloc k1 of 0 or 1 blocks, PinIfReady of the absent k1), so every other
#: call there must be refused; the three targets have no edges, so the replay
#: treats them as a depth-bounded frontier (no refusal checks).
_EMPTY = "/\\ free = {0}\n/\\ queue = <<>>\n/\\ evictable = 0\n/\\ entries = << >>\n"
TINY = StateGraph(
    states={
        "0": parse_state(_EMPTY + '/\\ lastOp = [n |-> 0, op |-> "Init", key |-> "none"]'),
        "1": parse_state(
            "/\\ free = {0}\n/\\ queue = <<>>\n/\\ evictable = 0\n"
            "/\\ entries = (k1 :> [blocks |-> {}, pins |-> -1])\n"
            '/\\ lastOp = [n |-> 0, op |-> "Alloc", key |-> k1]'
        ),
        "2": parse_state(
            "/\\ free = {}\n/\\ queue = <<>>\n/\\ evictable = 0\n"
            "/\\ entries = (k1 :> [blocks |-> {0}, pins |-> -1])\n"
            '/\\ lastOp = [n |-> 1, op |-> "Alloc", key |-> k1]'
        ),
        "3": parse_state(_EMPTY + '/\\ lastOp = [n |-> 0, op |-> "PinIfReady", key |-> k1]'),
    },
    edges=[("0", "1", "Alloc"), ("0", "2", "Alloc"), ("0", "3", "PinIfReady")],
    initial=["0"],
)
TINY_KEYS, TINY_N, TINY_MAX_PINS = ["k1"], 1, 1


def _replay_tiny(**overrides: Callable[..., Any]) -> ReplayReport:
    ops = {**REAL_OPERATIONS, **overrides}
    return replay_graph(TINY, TINY_KEYS, TINY_N, TINY_MAX_PINS, ops)


def test_tiny_graph_replays_cleanly_on_the_real_transitions() -> None:
    report = _replay_tiny()
    assert report.ok, report.mismatches
    assert (report.states, report.edges_total, report.edges_replayed) == (4, 3, 3)
    # Refused at Init: mark_ready/pin/unpin/discard of the absent k1, alloc(k1, N + 1).
    assert report.disabled_checked == 5


# Wrong operations. Each wraps the real one, so the only divergence is the planted one.


def _alloc_returns_ready(s: CacheState, key: str, n: int) -> Any:
    entry = transitions.alloc(s, key, n)
    transitions.mark_ready(s, key)  # wrong: a new entry must start not-ready
    return entry


def _alloc_takes_spare_block(s: CacheState, key: str, n: int) -> Any:
    # wrong: takes a block more than asked while one is free
    return transitions.alloc(s, key, n + 1 if len(s.free) > n else n)


def _pin_if_ready_raises(s: CacheState, key: str) -> Any:
    raise CacheError(f"{key} refused")  # wrong: pin_if_ready of an absent key is a query


def _discard_accepts_absent(s: CacheState, key: str) -> None:
    if key in s.entries:  # wrong: an absent key must raise UnknownKeyError
        transitions.discard(s, key)


def _unpin_leaks_on_refusal(s: CacheState, key: str) -> None:
    try:
        transitions.unpin(s, key)
    except CacheError:
        s.free.pop()  # wrong: a refused call must change nothing (MisuseUnchangedProp)
        raise


def _pin_untyped_error(s: CacheState, key: str) -> None:
    raise KeyError(key)  # wrong: misuse must raise a typed CacheError


@pytest.mark.parametrize(
    ("override", "steps", "detail"),
    [
        (
            {"alloc": _alloc_returns_ready},
            ["alloc('k1', 0)", "alloc('k1', 1)"],
            "returned entry, spec says not-ready-entry",
        ),
        ({"alloc": _alloc_takes_spare_block}, ["alloc('k1', 0)"], "state AbstractState("),
        ({"pin_if_ready": _pin_if_ready_raises}, ["pin_if_ready('k1')"], "raised CacheError"),
        ({"discard": _discard_accepts_absent}, ["discard('k1')"], "accepted (returned none)"),
        ({"unpin": _unpin_leaks_on_refusal}, ["unpin('k1')"], "raised but changed"),
        ({"pin": _pin_untyped_error}, ["pin('k1')"], "raised KeyError, not a typed CacheError"),
    ],
    ids=["result", "state", "step-raises", "refusal-accepted", "refusal-changes", "untyped"],
)
def test_tiny_graph_catches_a_wrong_operation(
    override: dict[str, Callable[..., Any]], steps: list[str], detail: str
) -> None:
    report = _replay_tiny(**override)
    assert not report.ok
    assert [m.step for m in report.mismatches] == steps
    assert all(m.source == "0" and m.detail.startswith(detail) for m in report.mismatches), (
        report.mismatches
    )


def test_mismatches_beyond_the_limit_are_counted() -> None:
    report = replay_graph(
        TINY,
        TINY_KEYS,
        TINY_N,
        TINY_MAX_PINS,
        {**REAL_OPERATIONS, "alloc": _alloc_returns_ready},
        max_mismatches=1,
    )
    assert [m.step for m in report.mismatches] == ["alloc('k1', 0)", ""]
    assert report.mismatches[1].detail == "... and 1 more"


def test_stop_at_first_leaves_edges_unreplayed_and_not_ok() -> None:
    report = replay_graph(
        TINY,
        TINY_KEYS,
        TINY_N,
        TINY_MAX_PINS,
        {**REAL_OPERATIONS, "alloc": _alloc_returns_ready},
        stop_at_first=True,
    )
    assert len(report.mismatches) == 1 and report.edges_replayed == 1 and not report.ok


def test_a_missing_spec_step_is_a_refusal_the_code_does_not_make() -> None:
    # Drop the Alloc of 0 blocks from the graph: the code's alloc(k1, 0) now
    # succeeds where the "spec" has no step, which the replay must report.
    partial = StateGraph(TINY.states, TINY.edges[1:], TINY.initial)
    report = replay_graph(partial, TINY_KEYS, TINY_N, TINY_MAX_PINS)
    assert [m.step for m in report.mismatches] == ["alloc('k1', 0)"]
    assert report.mismatches[0].detail.startswith("accepted")


# ---------------------------------------------------------------- real graphs (TLC)

#: Planted bugs MCSmoke (2 keys) cannot show: each needs an eviction while a
#: third entry is queued or held besides the victim and the key being allocated.
NEEDS_THREE_KEYS = frozenset(
    {"alloc_evict_newest", "alloc_evict_one_too_many", "alloc_evict_before_fail_fast"}
)


@pytest.fixture(scope="module")
def smoke(tla_dir: Path) -> Iterator[DumpedModel]:
    """MCSmoke's state graph, dumped once for this module (TLC ~2-4 s)."""
    yield dump_state_graph(tla_dir, "MCSmoke")


@pytest.fixture(scope="module")
def wide(tla_dir: Path) -> Iterator[DumpedModel]:
    """MCReplayWide's state graph, dumped once for this module (TLC ~12-18 s)."""
    yield dump_state_graph(tla_dir, "MCReplayWide")


def _replay(model: DumpedModel) -> ReplayReport:
    return replay_graph(model.graph, model.keys, model.num_blocks, model.max_pins)


def _planted_check(bug: PlantedBug, model: DumpedModel) -> tuple[bool, str]:
    return planted_links.check_replay(
        bug, model.graph, model.keys, model.num_blocks, model.max_pins
    )


@pytest.mark.tlc
def test_smoke_graph_is_the_expected_model(smoke: DumpedModel) -> None:
    assert (smoke.keys, smoke.num_blocks, smoke.max_pins) == (["k1", "k2"], 3, 2)
    assert len(smoke.graph.states) == 2293  # TLC: "2293 distinct states found"
    assert len(smoke.graph.edges) == 11848  # every generated step but Init's
    assert len(smoke.graph.initial) == 1


@pytest.mark.tlc
def test_smoke_every_edge_replays_on_the_real_transitions(smoke: DumpedModel) -> None:
    report = _replay(smoke)
    assert report.mismatches == []
    assert report.edges_replayed == report.edges_total == len(smoke.graph.edges)
    assert report.disabled_checked > 0
    assert report.ok


@pytest.mark.tlc
@pytest.mark.parametrize("bug", PLANTED, ids=planted_links.short_name)
def test_smoke_replay_catches_each_planted_bug_it_can_show(
    smoke: DumpedModel, bug: PlantedBug
) -> None:
    caught, detail = _planted_check(bug, smoke)
    if planted_links.short_name(bug) in NEEDS_THREE_KEYS:
        assert not caught, f"MCSmoke now shows this bug ({detail}): drop it from NEEDS_THREE_KEYS"
        return
    assert caught, detail
    # The first divergence is a call of the broken transition, not a knock-on effect.
    assert detail.startswith(f"{bug.transition}("), detail


@pytest.mark.tlc
@pytest.mark.parametrize("bug", PLANTED, ids=planted_links.short_name)
def test_wide_replay_catches_every_planted_bug(wide: DumpedModel, bug: PlantedBug) -> None:
    caught, detail = _planted_check(bug, wide)
    assert caught, detail
    assert detail.startswith(f"{bug.transition}("), detail
