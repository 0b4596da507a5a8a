"""Compare two reports of ``embedding-cache verify --json`` (e.g. last night's and tonight's).

Each report is flattened into entries keyed by (step, item): a TLC model, a
replay model of a policy, a trace, a planted bug, a policy's CrossHair or
linearizability figures, a simulation, a big model, each step's total, and
the profile's settings (so a ci report compared with a nightly one says so).
Every entry has ``ok`` and the figures worth watching (states, edges, traces,
histories, seconds, ...). Two reports differ by:

* ``regression`` -- an entry that was ok and now is not (the one kind that fails
  the comparison);
* ``fixed``      -- one that was not ok and now is;
* ``changed``    -- a count changed, or seconds by more than ``SECONDS_TOLERANCE``
  (and ``SECONDS_FLOOR`` s): wall time on a shared machine is noisy;
* ``new`` / ``missing`` -- an entry only the new / only the old report has (a
  model added or dropped, or reports of different profiles).

Reports written before a section existed simply lack its entries. Cost:
O(entries of both reports).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..text_table import render_table  # the project's one table renderer
from .records import LINKS  # the links a planted bug can be caught by

#: Seconds that changed by less than this fraction, or by less than SECONDS_FLOOR, are noise.
SECONDS_TOLERANCE = 0.25
SECONDS_FLOOR = 1.0

Entry = dict[str, Any]
Key = tuple[str, str]


def _pick(source: Mapping[str, Any], **names: str) -> Entry:
    """``{new_name: source[old_name]}`` for the names ``source`` has."""
    return {new: source[old] for new, old in names.items() if old in source}


def entries(report: Mapping[str, Any]) -> dict[Key, Entry]:
    """The report's entries by (step, item). O(size of the report)."""
    out: dict[Key, Entry] = {}
    if report.get("profile"):  # how hard the run checked: why figures may differ
        out[("profile", "settings")] = dict(report["profile"])
    for step, verdict in (report.get("steps") or {}).items():
        out[("step", step)] = _pick(verdict, ok="ok", seconds="seconds")
    for model in (report.get("tlc") or {}).get("models", []):
        out[("tlc", model["name"])] = _pick(
            model, ok="ok", result="result", states="distinct_states", seconds="seconds"
        )
    for policy, section in (report.get("policies") or {}).items():
        _policy_entries(out, policy, section)
    stateful = report.get("stateful")
    if stateful:
        out[("stateful", stateful.get("target", "stateful"))] = _pick(
            stateful, ok="ok", passed="passed", failed="failed", seconds="seconds"
        )
    for sim in (report.get("simulate") or {}).get("models", []):
        out[("simulate", sim["name"])] = _pick(
            sim, ok="ok", result="result", traces="traces", states="states", seconds="seconds"
        )
    for model in (report.get("distributed") or {}).get("models", []):
        out[("distributed", model["name"])] = _pick(
            model, ok="ok", result="result", states="distinct_states", seconds="seconds"
        )
    return out


def _policy_entries(out: dict[Key, Entry], policy: str, section: Mapping[str, Any]) -> None:
    """The entries of one policy's sections, keyed ``policy/name``."""
    for model in (section.get("conformance") or {}).get("models", []):
        entry = _pick(
            model,
            states="states",
            edges="edges_replayed",
            mismatches="mismatches",
            depth="depth_bound",
        )
        # A report without ``complete`` predates block-exact replays: every edge replayed.
        whole = model.get("complete", model["edges_replayed"] == model["edges_total"])
        complete = not model.get("full") or whole
        entry["ok"] = model["mismatches"] == 0 and complete
        entry["seconds"] = round(model.get("tlc_seconds", 0) + model.get("replay_seconds", 0), 1)
        out[("conformance", f"{policy}/{model['model']}")] = entry
    for trace in (section.get("trace_validation") or {}).get("details", []):
        out[("traces", f"{policy}/{trace['trace']}")] = _pick(
            trace, ok="accepted", steps="steps", seconds="seconds"
        )
    crosshair = section.get("crosshair")
    if crosshair:
        out[("crosshair", policy)] = _pick(
            crosshair,
            ok="ok",
            conditions="conditions",
            counterexamples="counterexamples",
            seconds="cpu_seconds",
        )
    for bug in (section.get("planted") or {}).get("details", []):
        entry = {link: bug[link] for link in LINKS if link in bug}
        entry["ok"] = all(caught is not False for caught in entry.values())
        out[("planted", f"{policy}/{bug['name']}")] = entry
    lin = section.get("linearizability")
    if lin:
        out[("linearizability", policy)] = _pick(
            lin,
            ok="ok",
            histories="histories",
            operations="operations",
            mutants_caught="mutants_caught",
            seconds="seconds",
        )


@dataclass(frozen=True)
class Change:
    """How one entry differs between the reports."""

    step: str
    item: str
    kind: str  # "regression", "fixed", "changed", "new", "missing"
    detail: str


@dataclass
class Comparison:
    """Every difference, and how many entries did not change."""

    changes: list[Change] = field(default_factory=list)
    unchanged: int = 0

    @property
    def regressions(self) -> list[Change]:
        """The entries that were ok and now are not."""
        return [c for c in self.changes if c.kind == "regression"]

    @property
    def ok(self) -> bool:
        """No regression."""
        return not self.regressions

    def counts(self) -> dict[str, int]:
        """How many changes of each kind, and the unchanged entries."""
        kinds = ("regression", "fixed", "changed", "new", "missing")
        return {
            **{kind: sum(c.kind == kind for c in self.changes) for kind in kinds},
            "unchanged": self.unchanged,
        }

    def to_json(self) -> dict[str, Any]:
        """The comparison as JSON."""
        return {
            "ok": self.ok,
            "counts": self.counts(),
            "changes": [
                {"step": c.step, "item": c.item, "kind": c.kind, "detail": c.detail}
                for c in self.changes
            ],
        }

    def render(self) -> str:
        """A table of the changes (regressions first) and a summary line."""
        order = {"regression": 0, "fixed": 1, "missing": 2, "new": 3, "changed": 4}
        rows = [
            [c.step, c.item, c.kind.upper() if c.kind == "regression" else c.kind, c.detail]
            for c in sorted(self.changes, key=lambda c: order[c.kind])
        ]
        counts = ", ".join(f"{n} {kind}" for kind, n in self.counts().items())
        verdict = "no regression" if self.ok else f"{len(self.regressions)} REGRESSION(S)"
        table = (
            render_table(["step", "item", "change", "detail"], rows, right=set()) if rows else ""
        )
        return "\n".join(part for part in (table, f"compare: {verdict} ({counts})") if part)


def _number(value: Any) -> float | None:
    """``value`` as a number (None for anything else, booleans included)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _differences(old: Entry, new: Entry) -> list[str]:
    """The figures (other than ok) that changed, as ``name old -> new`` texts."""
    out = []
    for name in sorted((set(old) | set(new)) - {"ok"}):
        before, after = old.get(name), new.get(name)
        if before == after:
            continue
        x, y = _number(before), _number(after)
        if x is None or y is None:
            out.append(f"{name} {before} -> {after}")
        elif name != "seconds":
            out.append(f"{name} {before:,} -> {after:,} ({y - x:+,g})")
        elif abs(y - x) >= max(SECONDS_FLOOR, SECONDS_TOLERANCE * x):
            out.append(f"seconds {x:g} -> {y:g} ({(y - x) / max(x, 1e-9):+.0%})")
    return out


def compare(old: Mapping[str, Any], new: Mapping[str, Any]) -> Comparison:
    """How report ``new`` differs from report ``old``. O(entries)."""
    before, after = entries(old), entries(new)
    result = Comparison()
    for key in sorted(set(before) | set(after)):
        step, item = key
        if key not in before:
            failing = "" if after[key].get("ok", True) else ", FAILING"
            result.changes.append(Change(step, item, "new", _summary(after[key]) + failing))
            continue
        if key not in after:
            result.changes.append(Change(step, item, "missing", _summary(before[key])))
            continue
        was, now = before[key].get("ok"), after[key].get("ok")
        details = _differences(before[key], after[key])
        if was is True and now is not True:
            kind = "regression"
        elif was is not True and now is True:
            kind = "fixed"
        elif details:
            kind = "changed"
        else:
            result.unchanged += 1
            continue
        if was != now:
            details.insert(0, f"ok {was} -> {now}")
        result.changes.append(Change(step, item, kind, "; ".join(details)))
    return result


def _summary(entry: Entry) -> str:
    """An entry's figures in one line."""
    return ", ".join(f"{name} {value}" for name, value in entry.items())
