"""Parse TLC's text output: the outcome, the statistics and the trace.

TLC (2.15) prints its verdict as one of a few fixed sentences and a
counterexample as ``State i: <Action ...>`` headers followed by
``/\\ var = value`` lines; values may continue on indented lines. The
patterns of that text are ``patterns``'s.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from . import patterns


class TlcOutcome(enum.StrEnum):
    """What TLC concluded."""

    PASS = "pass"  # the model checked completely, no violation
    INVARIANT = "invariant"  # a state invariant is violated
    ACTION_PROPERTY = "action-property"  # an action property ([][A]_v) is violated
    TEMPORAL = "temporal"  # a temporal (liveness) property is violated
    DEADLOCK = "deadlock"  # a state without successors
    PARSE_ERROR = "parse-error"  # the modules or the config do not parse
    ERROR = "error"  # any other error TLC reported (evaluation, assumption, ...)
    INCOMPLETE = "incomplete"  # TLC stopped without a verdict (killed, crashed)


@dataclass
class CounterexampleState:
    """One state of a counterexample and the action that produced it."""

    number: int  # TLC's state number (1 is the initial state)
    action: str  # "Init", an action name, "Stuttering", or "Back to state i"
    state: dict[str, str]  # every variable's value, as TLA+ text
    changed: dict[str, str]  # the variables this step changed (all, for Init)


@dataclass
class TlcOutput:
    """The parsed result of one TLC run."""

    outcome: TlcOutcome
    violated: str | None = None  # the invariant/property TLC named, if any
    message: str = ""  # the first error line(s), for error outcomes
    version: str | None = None
    states_generated: int | None = None
    distinct_states: int | None = None
    initial_states: int | None = None  # distinct initial states (the inductive models')
    depth: int | None = None
    trace: list[CounterexampleState] = field(default_factory=list)


def _int(text: str) -> int:
    """Parse TLC's comma-grouped integers."""
    return int(text.replace(",", ""))


def _action_name(label: str) -> str:
    """``<Alloc line 12, col 5 ... of module M>`` -> ``Alloc``."""
    label = label.strip()
    if label == "<Initial predicate>":
        return "Init"
    if label.startswith("Stuttering"):
        return "Stuttering"
    match = patterns.ACTION_LABEL.match(label)
    return match.group("name") if match else label.strip("<>")


def parse_trace(text: str) -> list[CounterexampleState]:
    """Return the counterexample in text as steps with their changes."""
    steps: list[CounterexampleState] = []
    current: dict[str, str] | None = None
    last_var: str | None = None

    def finish() -> None:
        if current is None or not steps:
            return
        previous = steps[-2].state if len(steps) > 1 else {}
        steps[-1].state = dict(current)
        steps[-1].changed = {k: v for k, v in current.items() if previous.get(k) != v}

    for line in text.splitlines():
        header = patterns.STATE_HEADER.match(line)
        back = patterns.BACK_TO.match(line)
        if header or back:
            finish()
            if back:
                target = int(back.group("n"))
                steps.append(CounterexampleState(target, f"Back to state {target}", {}, {}))
                current = None
                continue
            assert header is not None
            steps.append(
                CounterexampleState(
                    int(header.group("n")), _action_name(header.group("label")), {}, {}
                )
            )
            current = {}
            last_var = None
            continue
        if current is None:
            continue
        if not line.strip():
            finish()
            current = None
            continue
        var = patterns.VAR_LINE.match(line)
        if var and (line.startswith("/\\ ") or not current):
            last_var = var.group("name")
            current[last_var] = var.group("value").strip()
        elif last_var is not None:  # a value continued on the next line
            current[last_var] += " " + line.strip()
    finish()
    return steps


def _outcome(text: str) -> tuple[TlcOutcome, str | None]:
    """Classify the run and name the violated invariant/property, if any."""
    if match := patterns.INVARIANT.search(text):
        return TlcOutcome.INVARIANT, match.group("name")
    if match := patterns.ACTION_PROPERTY.search(text):
        # A whole specification checked as a property is reported by the source
        # position of its expansion, not by name: ``counterexample`` names it.
        what = match.group("what")
        return TlcOutcome.ACTION_PROPERTY, None if patterns.POSITION.search(what) else what
    if patterns.TEMPORAL.search(text):
        return TlcOutcome.TEMPORAL, None
    if patterns.DEADLOCK.search(text):
        return TlcOutcome.DEADLOCK, None
    if patterns.PARSE_ERROR.search(text):
        return TlcOutcome.PARSE_ERROR, None
    if patterns.ERROR.search(text):
        return TlcOutcome.ERROR, None
    if patterns.PASS.search(text):
        return TlcOutcome.PASS, None
    return TlcOutcome.INCOMPLETE, None


def _error_message(text: str) -> str:
    """The first error paragraph TLC printed (or the parse errors)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(patterns.ERROR_STARTS):
            block: list[str] = []
            for follow in lines[i : i + 12]:
                if block and follow.startswith(patterns.ERROR_ENDS):
                    break
                block.append(follow)
            return "\n".join(b for b in block if b.strip()).strip()
    return ""


def parse_output(text: str) -> TlcOutput:
    """Parse the complete (or truncated) output of one TLC run."""
    outcome, violated = _outcome(text)
    result = TlcOutput(outcome=outcome, violated=violated)
    if match := patterns.VERSION.search(text):
        result.version = match.group("v")
    stats = list(patterns.STATS.finditer(text)) or list(patterns.PROGRESS.finditer(text))
    if stats:
        result.states_generated = _int(stats[-1].group("gen"))
        result.distinct_states = _int(stats[-1].group("distinct"))
    if match := patterns.INITIAL.search(text):
        result.initial_states = _int(match.group("distinct"))
    if match := patterns.DEPTH.search(text):
        result.depth = int(match.group("d"))
    elif progress := list(patterns.PROGRESS.finditer(text)):
        result.depth = int(progress[-1].group("depth"))
    if outcome in (
        TlcOutcome.INVARIANT,
        TlcOutcome.ACTION_PROPERTY,
        TlcOutcome.TEMPORAL,
        TlcOutcome.DEADLOCK,
    ):
        result.trace = parse_trace(text)
    if outcome not in (TlcOutcome.PASS, TlcOutcome.INCOMPLETE):
        result.message = _error_message(text)
    return result
