"""Each step's verdict on a report: True/False for a step that ran, for one policy or all.

One function per step, taking the report and the policy (None: all policies);
``step_table.STEP_TABLE`` pairs each with its step, and ``VerifyReport.step_ok``
looks it up there after the checks every step shares (the step ran; no error of
it was recorded for the policy). Each is O(the step's results).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..tlc.simulate import SimulationResult
from .records import LINKS

if TYPE_CHECKING:
    from .report import VerifyReport

#: A step's verdict: (report, policy or None for all) -> True, False, or None (nothing
#: of that policy's to judge).
Verdict = Callable[["VerifyReport", "str | None"], "bool | None"]


def simulated(result: SimulationResult) -> bool:
    """The simulation met its expectation, and checked something: a pass with no
    finished trace (e.g. a budget shorter than TLC's start-up) is no evidence. O(1)."""
    return result.ok and (result.traces > 0 or result.seconds_to_violation is not None)


def tlc_ok(report: VerifyReport, policy: str | None) -> bool:
    """Every model (of the policy) met its expectation; a policy with no model of its
    own fails."""
    results = report.tlc_results(policy)
    return bool(results) and all(r.ok for r in results)


def conformance_ok(report: VerifyReport, policy: str | None) -> bool:
    """No replay mismatched, and every full replay replayed every edge (a block-exact one:
    every edge out of a state the code reached, of the choice of ids it made)."""
    runs = report.of_policy(report.replays, policy)
    return bool(runs) and all(
        not r.report.mismatches and (not r.full or r.report.complete) for r in runs
    )


def traces_ok(report: VerifyReport, policy: str | None) -> bool:
    """Some trace was validated, and TLC accepted every one."""
    traces = report.of_policy(report.traces, policy)
    return bool(traces) and all(t.verdict.accepted for t in traces)


def crosshair_ok(report: VerifyReport, policy: str | None) -> bool:
    """CrossHair ran on some condition (of the policy) and refuted none."""
    if report.crosshair is None:
        return False
    mine = [d for d in report.crosshair.details if policy is None or d.policy == policy]
    return bool(mine) and all(d.outcome in ("confirmed", "unrefuted") for d in mine)


def planted_ok(report: VerifyReport, policy: str | None) -> bool:
    """Some planted bug was checked, and no link that must catch one missed it."""
    planted = report.of_policy(report.planted, policy)
    return bool(planted) and all(p.link(link) is not False for p in planted for link in LINKS)


def linearizability_ok(report: VerifyReport, policy: str | None) -> bool:
    """Every history (of the policy) was linearizable and every mutant caught."""
    lin = [r for p, r in report.linearizability.items() if policy in (None, p)]
    return bool(lin) and all(r["ok"] for r in lin)


def stateful_ok(report: VerifyReport, policy: str | None) -> bool | None:
    """The stateful tests passed (they are not split by policy: None for one)."""
    if policy is not None:
        return None
    return report.stateful is not None and report.stateful.ok


def simulate_ok(report: VerifyReport, policy: str | None) -> bool | None:
    """Every simulation met its expectation and checked something; for one policy, None
    when it had no simulation."""
    verdicts = [simulated(s) for s in report.simulations if policy in (None, s.base.policy)]
    if policy is None:
        return bool(verdicts) and all(verdicts)
    return all(verdicts) if verdicts else None


def distributed_ok(report: VerifyReport, policy: str | None) -> bool | None:
    """Every big model met its expectation; no big model at all is no failure (the
    manifest may have none); for one policy, None when none is its own."""
    verdicts = [b.result.ok for b in report.big_models if policy in (None, b.policy)]
    if policy is None:
        return all(verdicts)
    return all(verdicts) if verdicts else None
