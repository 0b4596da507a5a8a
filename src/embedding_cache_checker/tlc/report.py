"""Render model results: a table for people, one JSON object for tools."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from ..text_table import render_table  # the project's one table renderer
from .config import read_config
from .counterexample import explain_failure
from .output import CounterexampleState
from .runner import ModelResult
from .trace_table import trace_table


def count_text(value: int | None) -> str:
    """A count as the tables print it: comma-grouped, ``-`` when unknown. O(digits)."""
    return "-" if value is None else f"{value:,}"


def counterexample_steps(result: ModelResult) -> int | None:
    """The transitions in ``result``'s counterexample (its states less the initial
    one), or None when TLC printed none: a bug model's length for spec/POLICIES.md
    section 6. O(1)."""
    trace = result.output.trace
    return len(trace) - 1 if trace else None


def results_table(results: list[ModelResult]) -> str:
    """One row per model: name, policy, expected, result, states, depth, the
    counterexample's steps, seconds."""
    rows = [
        [
            r.model.name,
            r.model.policy or "-",
            r.model.expect,
            r.result,
            count_text(r.output.distinct_states),
            count_text(r.output.depth),
            count_text(counterexample_steps(r)),
            f"{r.seconds:.1f}",
            "ok" if r.ok else f"FAIL ({r.note})",
        ]
        for r in results
    ]
    headers = [
        "model",
        "policy",
        "expected",
        "result",
        "distinct states",
        "depth",
        "steps",
        "seconds",
        "verdict",
    ]
    return render_table(headers, rows, right={4, 5, 6, 7})


def failure_report(result: ModelResult, tla_dir: Path | None = None) -> str:
    """Why a model failed: what was violated, by name (a refinement check that TLC
    reports by source position is named from the module files in ``tla_dir``),
    and the counterexample as a table; else TLC's message."""
    lines = [f"{result.model.name}: {result.note}"]
    if tla_dir is not None and (
        explained := explain_failure(
            result.raw_output,
            [tla_dir],
            read_config(tla_dir / result.model.config).properties,
        )
    ):
        lines.append(explained)
    elif result.output.trace:
        lines.append(trace_table(result.output.trace))
    elif result.output.message:
        lines.append(textwrap.indent(result.output.message, "  "))
    elif result.timed_out:
        lines.append("  TLC was stopped after its hard timeout.")
    else:
        tail = result.raw_output.strip().splitlines()[-15:]
        lines.append(textwrap.indent("\n".join(tail), "  "))
    return "\n".join(lines)


def state_json(step: CounterexampleState) -> dict[str, Any]:
    """A counterexample step as JSON."""
    return {"state": step.number, "action": step.action, "changed": step.changed}


def result_json(result: ModelResult) -> dict[str, Any]:
    """One model's result as JSON (the fields of the documented schema first)."""
    out = result.output
    data: dict[str, Any] = {
        "name": result.model.name,
        "policy": result.model.policy,
        "policy_params": dict(result.model.policy_params),
        "expect": result.model.expect,
        "result": result.result,
        "ok": result.ok,
        "distinct_states": out.distinct_states,
        "depth": out.depth,
        "counterexample_steps": counterexample_steps(result),
        "seconds": round(result.seconds, 3),
        "cpu_seconds": None if result.cpu_seconds is None else round(result.cpu_seconds, 3),
        "constants": result.constants,
        "spec": result.model.spec,
        "config": result.model.config,
        "checks": result.model.checks,
        "defect": result.model.defect,
        "budget_seconds": result.model.budget_seconds,
        "states_generated": out.states_generated,
        "initial_states": out.initial_states,
        "outcome": str(out.outcome),
        "note": result.note,
    }
    if not result.ok:
        data["message"] = out.message
        data["counterexample"] = [state_json(s) for s in out.trace]
    return data


def run_json(jar: str, version: str, results: list[ModelResult]) -> dict[str, Any]:
    """The whole run as one JSON object."""
    return {
        "tlc": {"jar": jar, "version": version},
        "ok": all(r.ok for r in results),
        "models": [result_json(r) for r in results],
    }
