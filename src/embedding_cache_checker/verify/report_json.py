"""The main job's JSON report: one top-level summary of all policies (``tlc``,
``conformance``, ``trace_validation``, ``crosshair``, ``planted``, ``linearizability``)
and ``policies``: the same sections for each policy, plus the extra steps' sections,
``steps`` (each step's verdict and seconds) and ``profile`` (its settings). Each
function is O(the results it summarises)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..tlc.report import run_json
from .crosshair_check import CrosshairResult
from .records import LINKS, PlantedResult, ReplayRun, TraceRun
from .step_names import STEPS
from .verdicts import policy_ok, run_ok, simulated, step_ok

if TYPE_CHECKING:
    from .report import VerifyReport

#: The per-history counts of a linearizability report that add up over policies.
_LIN_COUNTS = (
    "histories",
    "operations",
    "lease_calls",
    "linearizable",
    "not_linearizable",
    "undecided",
)


def _replay_json(r: ReplayRun) -> dict[str, Any]:
    return {
        "model": r.model,
        "policy": r.policy,
        "full": r.full,
        "states": r.report.states,
        "edges_total": r.report.edges_total,
        "edges_replayed": r.report.edges_replayed,
        "block_exact": r.report.block_exact,
        "states_reached": r.report.states_reached,
        "edges_other_choice": r.report.edges_other_choice,
        "edges_unreached": r.report.edges_unreached,
        "complete": r.report.complete,
        "refused_calls_checked": r.report.disabled_checked,
        "mismatches": len(r.report.mismatches),
        "depth_bound": r.depth_bound,
        "depth_overridden": r.depth_overridden,
        "first_mismatches": [f"{m.step}: {m.detail}"[:300] for m in r.report.mismatches[:5]],
        "tlc_seconds": round(r.tlc_seconds, 1),
        "replay_seconds": round(r.seconds, 1),
    }


def conformance_json(replays: list[ReplayRun]) -> dict[str, Any]:
    """The conformance section: the headline model's figures, then every model's."""
    head = replays[0] if replays else None
    return {
        "model": head.model if head else "",
        "edges_total": head.report.edges_total if head else 0,
        "edges_replayed": head.report.edges_replayed if head else 0,
        "mismatches": len(head.report.mismatches) if head else 0,
        "refused_calls_checked": sum(r.report.disabled_checked for r in replays),
        "models": [_replay_json(r) for r in replays],
    }


def traces_json(traces: list[TraceRun]) -> dict[str, Any]:
    """The trace_validation section."""
    return {
        "traces": len(traces),
        "accepted": sum(t.verdict.accepted for t in traces),
        "steps": sum(t.verdict.steps for t in traces),
        "details": [
            {
                "trace": t.name,
                "policy": t.policy,
                "steps": t.verdict.steps,
                "accepted": t.verdict.accepted,
                "matched": t.verdict.matched,
                "seconds": round(t.verdict.seconds, 2),
                "detail": t.verdict.detail,
            }
            for t in traces
        ],
    }


def planted_json(planted: list[PlantedResult]) -> dict[str, Any]:
    """The planted section: how many each link caught, of how many it must."""
    return {
        "count": len(planted),
        **{f"caught_by_{link}": sum(p.link(link) is True for p in planted) for link in LINKS},
        "must_catch": {link: sum(p.link(link) is not None for p in planted) for link in LINKS},
        "details": [
            {
                "name": p.name,
                "policy": p.policy,
                "kind": p.kind,
                "transition": p.transition,
                "replay": p.replay,
                "traces": p.traces,
                "crosshair": p.crosshair,
                "notes": p.notes,
            }
            for p in planted
        ],
    }


def lin_json(reports: Mapping[str, Mapping[str, Any]], policy: str | None) -> dict[str, Any]:
    """The linearizability section: all policies' reports summed, or one policy's.

    ``mutants`` gives, per mutant, whether it was caught under every policy counted
    and the histories that took; ``seconds`` counts the real histories and the hunts.
    """
    mine = {p: r for p, r in reports.items() if policy in (None, p)}
    if not mine:
        return {}
    rows = [r["policies"][p] for p, r in mine.items()]
    mutants: dict[str, dict[str, Any]] = {}
    hunt_seconds = 0.0
    for p, r in mine.items():
        for name, per in r["mutants"].items():
            entry = mutants.setdefault(name, {"caught": True, "histories": 0})
            entry["caught"] = entry["caught"] and per[p]["caught"]
            entry["histories"] += per[p]["histories"]
            hunt_seconds += per[p]["seconds"]
    witness = next((row["witness"] for row in rows if row["witness"]), None)
    return {
        **{key: sum(row[key] for row in rows) for key in _LIN_COUNTS},
        "sweep_failures": sum(row["sweep_failures"] for row in rows),
        "mutants_caught": sum(m["caught"] for m in mutants.values()),
        "mutants_total": len(mutants),
        "mutants": mutants,
        "ok": all(r["ok"] for r in mine.values()),
        "seconds": round(sum(row["seconds"] for row in rows) + hunt_seconds, 1),
        **({"witness": str(witness)[:2000]} if witness else {}),
    }


def crosshair_json(result: CrosshairResult | None, policy: str | None) -> dict[str, Any]:
    """The crosshair section: all of ``result``, or the part of one policy."""
    if result is None:
        return {}
    details = [d for d in result.details if policy is None or d.policy == policy]
    return {
        "functions": len({(d.policy, d.unit) for d in details}),
        "conditions": len(details),
        "counterexamples": sum(d.outcome == "counterexample" for d in details),
        "ok": all(d.outcome in ("confirmed", "unrefuted") for d in details),
        "cpu_seconds": round(sum(d.seconds for d in details), 1),
        "seconds": round(result.seconds, 1),  # wall-clock time of the whole run
    }


def sections(report: VerifyReport, policy: str | None) -> dict[str, Any]:
    """The six sections (tlc, conformance, trace_validation, crosshair, planted,
    linearizability), of all policies or of one."""
    tlc = report.tlc_results(policy)
    return {
        "tlc": run_json(report.tlc_jar, report.tlc_version, tlc) if report.tlc else {},
        "conformance": conformance_json(report.of_policy(report.replays, policy)),
        "trace_validation": traces_json(report.of_policy(report.traces, policy)),
        "crosshair": crosshair_json(report.crosshair, policy),
        "planted": planted_json(report.of_policy(report.planted, policy)),
        "linearizability": lin_json(report.linearizability, policy),
    }


def extra_sections(report: VerifyReport, policy: str | None) -> dict[str, Any]:
    """The sections of the extra steps that ran (for one policy: its own results)."""
    out: dict[str, Any] = {}
    if "stateful" in report.seconds and policy is None:
        out["stateful"] = report.stateful.to_json() if report.stateful is not None else {}
    if "simulate" in report.seconds:
        sims = [s for s in report.simulations if policy in (None, s.base.policy)]
        out["simulate"] = {
            "ok": all(simulated(s) for s in sims),
            "traces": sum(s.traces for s in sims),
            "states": sum(s.states for s in sims),
            "models": [{**s.to_json(), "ok": simulated(s)} for s in sims],
        }
    if "distributed" in report.seconds:
        runs = [b for b in report.big_models if policy in (None, b.policy)]
        out["distributed"] = {
            "ok": all(b.result.ok for b in runs),
            "workers": report.profile.distributed_workers,
            "models": [b.to_json() for b in runs],
        }
    return out


def _policy_json(report: VerifyReport, policy: str) -> dict[str, Any]:
    return {
        "ok": policy_ok(report, policy),
        **sections(report, policy),
        **extra_sections(report, policy),
        "seconds": {k: round(v, 1) for k, v in report.policy_seconds.get(policy, {}).items()},
        "errors": report.policy_errors.get(policy, []),
    }


def report_json(report: VerifyReport) -> dict[str, Any]:
    """The report as one JSON object (the documented keys first)."""
    return {
        "ok": run_ok(report),
        **sections(report, None),
        **extra_sections(report, None),
        "policies": {policy: _policy_json(report, policy) for policy in report.policies},
        "steps": {
            step: {"ok": step_ok(report, step), "seconds": round(report.seconds[step], 1)}
            for step in STEPS
            if step in report.seconds
        },
        "profile": report.profile.to_json(),
        "seconds": {k: round(v, 1) for k, v in report.seconds.items()},
        "errors": report.errors,
    }
