"""Non-vacuity: each planted divergence must be caught by each conformance link.

For every bug in ``planted.PLANTED`` (a broken copy of one transition):
the state-graph replay runs with that transition swapped in; trace validation
checks traces recorded with it swapped in; CrossHair looks for a
counterexample to its contract. Each link reports caught / planted.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import transitions
from .planted import PLANTED, PlantedBug
from .replay import replay_graph
from .state_graph import StateGraph
from .traces import validate_trace
from .workloads import random_trace

#: Seeds of the sequential traces recorded per planted bug (stop at the first rejected).
TRACE_SEEDS = (1, 2, 3)


@dataclass
class PlantedOutcome:
    """Which links caught one planted bug, and how."""

    name: str
    transition: str
    caught_by_replay: bool | None = None  # None: not run
    caught_by_traces: bool | None = None
    caught_by_crosshair: bool | None = None
    notes: list[str] = field(default_factory=list)


def planted_function(bug: PlantedBug) -> Callable[..., Any]:
    """The broken function a PlantedBug names."""
    module, _, name = bug.target.rpartition(".")
    func: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return func


def operations_with(bug: PlantedBug) -> dict[str, Callable[..., Any]]:
    """The real operations, with the bug's transition replaced by the broken copy."""
    ops = dict(transitions.OPERATIONS)
    ops[bug.transition] = planted_function(bug)
    return ops


def short_name(bug: PlantedBug) -> str:
    """The planted function's own name."""
    return bug.target.rsplit(".", 1)[1]


def check_replay(
    bug: PlantedBug, graph: StateGraph, keys: list[str], num_blocks: int, max_pins: int
) -> tuple[bool, str]:
    """Replay the graph with the bug swapped in; caught iff some step mismatches."""
    report = replay_graph(
        graph,
        keys,
        num_blocks,
        max_pins,
        operations_with(bug),
        max_mismatches=1,
        stop_at_first=True,
    )
    if report.mismatches:
        m = report.mismatches[0]
        return True, f"{m.step}: {m.detail}"[:200]
    return False, "every edge matched"


def check_traces(bug: PlantedBug, tla_dir: Path) -> tuple[bool, str]:
    """Record traces with the bug swapped in; caught iff TLC rejects one."""
    for seed in TRACE_SEEDS:
        cache = random_trace(seed, operations=operations_with(bug))
        verdict = validate_trace(cache.trace, cache.num_blocks, tla_dir)
        if not verdict.accepted:
            step = verdict.first_rejected
            where = f"step {verdict.matched + 1}" + (
                f" {step.op}({step.key!r}) -> {step.result}" if step else ""
            )
            return True, f"seed {seed}: rejected at {where} {verdict.detail}".strip()
    return False, f"TLC accepted traces of seeds {TRACE_SEEDS}"


def all_planted() -> tuple[PlantedBug, ...]:
    """Every planted bug."""
    return PLANTED
