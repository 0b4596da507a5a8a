"""What a CrossHair check is and how it is budgeted: the vocabulary the driver
(``crosshair_check``) and the in-process worker (``crosshair_plugin``) share.

Kept apart from both so that neither imports the other: the driver starts
workers that import the plugin, and the plugin reports in these terms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: The transitions CrossHair checks (every function in ``transitions`` with a contract).
TRANSITIONS: tuple[str, ...] = ("alloc", "pin_if_ready", "unpin", "pin", "mark_ready", "discard")

# Budgets are counted in paths (CrossHair's iterations, ``max_iterations``), not in
# seconds: CrossHair's search is seeded (its path chooser and Z3 both use fixed
# seeds) and the worker fixes PYTHONHASHSEED, so the same budget explores the same
# paths, and finds the same counterexamples, however loaded the machine is. Time
# limits remain only as safety nets, each far above what the budget needs: a
# condition that hits its CPU cap "gave up" (not "unrefuted", and for a planted
# bug not "missed"), and a path or solver query abandoned for time is counted
# (``time_outs``), since it is the one thing load could still change.

#: Paths (iterations) one CPU second buys, about, on an idle machine (the clean check's
#: conditions measured: docs/MEASURED.md, "CrossHair budgets"). Converts the
#: seconds-sized knobs (``PER_CONDITION_SECONDS``, ``--crosshair-timeout``, the
#: profiles') to paths. What a knob finds depends on the paths alone; a machine that
#: buys fewer paths a second only makes it cost more time.
PATHS_PER_SECOND = 30
#: The clean check's budget per condition, in seconds at ``PATHS_PER_SECOND``: it runs
#: ``paths_for(PER_CONDITION_SECONDS)`` = 45 paths on every condition of every
#: (policy, transition) job (``crosshair_check.clean_jobs``).
PER_CONDITION_SECONDS = 1.5
#: Paths per condition for planted bugs: a miss costs the whole budget, so be generous
#: (each job stops at its first counterexample). Where a catch comes moves with every
#: change to the code the search runs (the path tree changes), and a budget once missed
#: a catch that had moved past it; so this one keeps headroom over the latest catch of
#: every planted job measured (docs/MEASURED.md, "CrossHair budgets", with the command
#: that re-measures it).
PLANTED_PATHS = 4000
#: The CPU cap of a condition is this many times what its budget costs at
#: ``PATHS_PER_SECOND`` (``cap_seconds``): a safety net, never the budget.
CAP_FACTOR = 10.0
#: CPU seconds per execution path (a safety net too; Z3 gets half of it, wall-clock,
#: per query): no path of a transition over a small state needs a hundredth of it.
PER_PATH_SECONDS = 20.0


def paths_for(seconds: float) -> int:
    """The path budget of ``seconds`` CPU seconds at ``PATHS_PER_SECOND``. O(1)."""
    return max(1, round(seconds * PATHS_PER_SECOND))


def cap_seconds(paths: int) -> float:
    """The CPU cap of a condition with a budget of ``paths``. O(1)."""
    return CAP_FACTOR * paths / PATHS_PER_SECOND


ConditionOutcome = Literal[
    "counterexample", "confirmed", "unrefuted", "gave_up", "vacuous", "error"
]


@dataclass(frozen=True)
class ConditionResult:
    """What CrossHair said about one condition of one job."""

    policy: str  # the policy of the states CrossHair built
    unit: str  # the transition (clean run) or the planted bug's name
    target: str  # dotted name of the checked function
    condition: str  # the condition's name (spec/NAMES.md): its icontract description
    check: str  # the condition function's own name, e.g. "mark_ready_counts_blocks"
    #: confirmed: all paths exhausted; unrefuted: the path budget spent, none found;
    #: gave_up: the CPU cap reached first (the safety net; neither a pass nor a miss)
    outcome: ConditionOutcome
    paths: int  # execution paths CrossHair completed (confirmed)
    seconds: float  # CPU seconds spent
    message: str  # the counterexample or error, as CrossHair words it ("" otherwise)
    iterations: int = 0  # paths started: what the budget counts
    time_outs: int = 0  # paths or solver queries abandoned for time (0: load-independent)
