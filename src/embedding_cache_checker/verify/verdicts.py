"""The verdicts on a report: each step's (True/False for a step that ran, for one policy
or all; None for one skipped), each policy's and the whole run's.

One function per step, taking the report and the policy (None: all policies), listed by
step name in ``VERDICTS``; ``step_ok`` looks a step's up there after the checks every
step shares (the step ran; no error of it was recorded for the policy), and
``policy_ok`` and ``run_ok`` fold the steps' verdicts. Each is O(the results judged).
"""

from __future__ import annotations

from collections.abc import Callable

from ..tlc.simulate import SimulationResult
from .records import LINKS
from .report import VerifyReport
from .step_names import STEPS

#: A step's verdict: (report, policy or None for all) -> True, False, or None (nothing
#: of that policy's to judge).
Verdict = Callable[[VerifyReport, "str | None"], "bool | None"]


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


#: Each step's verdict, by step name (``step_names.STEPS``).
VERDICTS: dict[str, Verdict] = {
    "tlc": tlc_ok,
    "conformance": conformance_ok,
    "traces": traces_ok,
    "crosshair": crosshair_ok,
    "planted": planted_ok,
    "linearizability": linearizability_ok,
    "stateful": stateful_ok,
    "simulate": simulate_ok,
    "distributed": distributed_ok,
}


def step_ok(report: VerifyReport, step: str, policy: str | None = None) -> bool | None:
    """True/False for a step that ran (for one policy, or all), None for one skipped:
    the step's own verdict (``VERDICTS``) after the checks all share. O(the step's
    results)."""
    if step not in report.seconds:
        return None
    if policy is not None and any(
        e.startswith(f"{step} [") for e in report.policy_errors.get(policy, [])
    ):
        return False
    return VERDICTS[step](report, policy)


def policy_ok(report: VerifyReport, policy: str) -> bool:
    """True iff every step that ran held for ``policy`` and nothing of its errored."""
    return all(step_ok(report, s, policy) is not False for s in STEPS) and not (
        report.policy_errors.get(policy)
    )


def run_ok(report: VerifyReport) -> bool:
    """True iff every step that ran held, for every policy, and nothing errored."""
    return not report.errors and all(step_ok(report, s) is not False for s in STEPS)
