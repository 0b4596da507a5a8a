"""Planted bugs' recordings validated by TLC: the planted step's traces link, judged.

``validate_planted`` checks each bug's recordings (``planted_recording``) against the
real policy's trace spec, in rounds and batches, and says per bug whether TLC rejected
one of them (caught) or accepted them all (missed). No code of a bug runs here: TLC
reads the recorded steps only.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .model_code import policy_factory
from .plans import PolicyPlan
from .planted import PlantedBug
from .planted_recording import PLANTED_TRACE_SEEDS, Recording
from .traces import TraceVerdict, map_batches, validate_traces

#: One planted bug's traces to validate: the bug, its policy's plan, its recordings.
PlantedCase = tuple[PlantedBug, PolicyPlan, list[Recording]]


def _trace_params(bug: PlantedBug, plan: PolicyPlan) -> dict[str, int]:
    """The parameters of the spec ``bug``'s traces under ``plan`` are checked against: the
    real policy's, with the bug's own (a broken policy has the real one's fields and
    constants), so no code of the bug runs in TLC's check. O(1)."""
    return {**plan.trace_params, **bug.params}


def _rejected(label: str, verdict: TraceVerdict) -> str:
    step = verdict.first_rejected
    where = f"step {verdict.matched + 1}" + (
        f" {step.op}({step.key!r}) -> {step.result}" if step else ""
    )
    return f"{label}: rejected at {where}"


def _spec_key(case: PlantedCase) -> str:
    """The spec a case's traces are checked against, as a key: cases with equal keys share
    a batch. O(parameters)."""
    bug, plan, _ = case
    return repr((plan.policy, sorted(_trace_params(bug, plan).items())))


def _planted_verdict(case: PlantedCase, label: str, verdict: TraceVerdict) -> tuple[bool, str]:
    """A rejected recording's (caught, note): caught at a rejected step; any other TLC
    failure is a miss, said as an error. O(1)."""
    if verdict.detail == "deadlock":
        return True, _rejected(label, verdict)
    bug, plan, _ = case
    return False, f"error: {bug.name} [{plan.policy}] {label}: {verdict.detail}"[:300]


def validate_planted(
    cases: Sequence[PlantedCase], tla_dir: Path, workers: int = 1
) -> list[tuple[bool, str]]:
    """Each case's (caught, note): its recordings validated by TLC in rounds, round j
    checking the j-th recording of every case not caught yet, in one batch
    (``traces.validate_traces``) per spec (``_trace_params``), ``workers`` batches at a
    time. A case is caught at its first rejected recording; a TLC failure other than a
    rejected step is a miss, said as an error. The witnesses come first, so most bugs
    cost a share of one short TLC run. O(TLC on each case's recordings up to its first
    rejected one, one JVM start per round and spec)."""
    verdicts: list[tuple[bool, str] | None] = [None] * len(cases)
    for j in range(max((len(recordings) for *_, recordings in cases), default=0)):
        pending = [c for c, (*_, recs) in enumerate(cases) if verdicts[c] is None and j < len(recs)]

        def check(
            members: list[int], j: int = j, pending: list[int] = pending
        ) -> list[TraceVerdict]:
            """One batch of round j: its cases' j-th recordings, under their one spec."""
            bug, plan, _ = cases[pending[members[0]]]
            traces = [cases[pending[m]][2][j][1:] for m in members]
            return validate_traces(
                traces, tla_dir, policy_factory(plan.policy, _trace_params(bug, plan))
            )

        specs = [_spec_key(cases[c]) for c in pending]
        for c, verdict in zip(pending, map_batches(specs, check, workers), strict=True):
            if not verdict.accepted:
                verdicts[c] = _planted_verdict(cases[c], cases[c][2][j][0], verdict)
    missed = (
        False,
        f"TLC accepted the witness (a core bug's) and the traces of seeds "
        f"{PLANTED_TRACE_SEEDS}, with and without leases",
    )
    return [missed if v is None else v for v in verdicts]


def validate_recordings(
    bug: PlantedBug, plan: PolicyPlan, recordings: list[Recording], tla_dir: Path
) -> tuple[bool, str]:
    """``validate_planted`` of one bug's recordings: caught iff TLC rejects one of them.
    O(TLC on each recording until one is rejected)."""
    return validate_planted([(bug, plan, recordings)], tla_dir)[0]
