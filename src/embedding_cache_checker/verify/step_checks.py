"""The main job's ``crosshair`` step (per policy, no counterexample to any transition's
contract over states holding that policy) and ``linearizability`` step (per policy,
concurrent histories of the real cache linearizable, and every mutant caught)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .crosshair_check import clean_jobs, run_crosshair
from .lin import linearizability_report

if TYPE_CHECKING:
    from .options import Job


def run_crosshair_step(job: Job) -> None:
    """CrossHair over every chosen policy's transitions, ``workers`` at a time, with the
    option's (else the profile's) seconds per condition. O(conditions * timeout)."""
    options = job.options
    timeout = options.crosshair_timeout
    if timeout is None:
        timeout = options.profile.crosshair_timeout
    result = run_crosshair(
        clean_jobs(list(options.policies)), timeout=timeout, jobs=options.workers
    )
    job.report.crosshair = result
    for line in result.summary():
        job.progress(f"crosshair {line}")


def run_linearizability(job: Job, policy: str) -> None:
    """The profile's number of histories of the real cache, and every mutant hunted.
    O(histories * the check of one)."""
    profile = job.options.profile
    result = linearizability_report(
        [policy], histories=profile.lin_histories, mutant_budget=profile.lin_mutant_budget
    )
    job.report.linearizability[policy] = result
    row = result["policies"][policy]
    hunts = ", ".join(
        f"{name} {'caught' if per[policy]['caught'] else 'MISSED'} after {per[policy]['histories']}"
        for name, per in result["mutants"].items()
    )
    job.progress(
        f"linearizability [{policy}] {row['linearizable']}/{row['histories']} histories "
        f"({row['operations']} calls, {row['lease_calls']} of them lease calls) linearizable "
        f"in {row['seconds']:.1f} s; mutants: {hunts}"
    )
