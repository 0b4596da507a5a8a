"""Planted bugs against the conformance links, for tests that take one bug at a time.

``embedding-cache verify`` runs every (bug, policy) pair of the catalogue
(``planted.PLANTED``) through every link itself (``main_job._run_planted``);
this module keeps the one-bug entry points the tests of each link use,
written against the catalogue's API (``PlantedBug.operations``,
``PlantedBug.eviction``) so there is no second list of bugs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .planted import DEFAULT_POLICY, PLANTED, PlantedBug
from .replay import replay_graph
from .state_graph import StateGraph


def short_name(bug: PlantedBug) -> str:
    """The bug's name (for test ids). O(1)."""
    return bug.name


def operations_with(bug: PlantedBug) -> dict[str, Callable[..., Any]]:
    """The real operations with the bug's transition swapped in (bare bodies). O(1)."""
    return bug.operations()


def all_planted(policy: str | None = None) -> tuple[PlantedBug, ...]:
    """Every planted bug, or those under ``policy``. O(|PLANTED|)."""
    return PLANTED if policy is None else tuple(b for b in PLANTED if b.applies_to(policy))


def check_replay(
    bug: PlantedBug,
    graph: StateGraph,
    keys: list[str],
    num_blocks: int,
    max_pins: int,
    policy: str = DEFAULT_POLICY,
    **params: Any,
) -> tuple[bool, str]:
    """Replay ``graph`` (a model of ``policy``) on the code with ``bug``; caught iff some
    step mismatches. ``params``: the model's policy constructor parameters.
    O(edges until the first mismatch)."""
    report = replay_graph(
        graph,
        keys,
        num_blocks,
        max_pins,
        bug.operations(),
        max_mismatches=1,
        stop_at_first=True,
        policy=bug.eviction(policy, **params),
        policy_name=policy,
    )
    if report.mismatches:
        m = report.mismatches[0]
        return True, f"{m.step}: {m.detail}"[:200]
    return False, "every edge matched"


def check_traces(bug: PlantedBug, tla_dir: Path, policy: str = DEFAULT_POLICY) -> tuple[bool, str]:
    """Record traces with ``bug`` under ``policy``; caught iff TLC rejects one
    (``main_job.planted_traces``: random workloads, then the bug's witness)."""
    from .plans import plan_for
    from .step_planted import planted_traces

    return planted_traces(bug, plan_for(policy, tla_dir), tla_dir)
