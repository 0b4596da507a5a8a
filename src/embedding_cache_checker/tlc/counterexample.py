"""Every failure shows its counterexample, and what it violated by name.

TLC names an invariant (``Error: Invariant TypeOK is violated.``) but not an
action property that is a whole specification (a refinement check such as
``CoreSpec == Core!Spec``): it prints its source position, ``Error: Action
property line 289, col 17 to line 289, col 29 of module EmbeddingCache is
violated.``, and action labels of conjunctive next-state relations are
positions too (``<Action line 32, col 43 to ... of module M>``); an action
that reaches the root through a bare ``INSTANCE`` (every action of a policy
module, through ``INSTANCE EmbeddingCachePolicy``) is labelled with the
position of that ``INSTANCE`` line. A deadlock names nothing. This module
maps a position back to the definition enclosing it (by reading the module
file), an ``INSTANCE`` position to the instanced module's action for the
operation the state's ``lastOp`` records, and renders the behaviour TLC
printed (after any violation, deadlock, or temporal violation's lasso) as
the readable step table that invariant violations get.

It reads TLC's raw text through ``patterns`` (every pattern of TLC's output);
the patterns of a TLA+ module's text and of the spec's ``lastOp`` record are
its own. It imports ``output`` (the trace) and ``steps``
(the table), neither of which imports it: no import cycle.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import patterns
from .output import parse_trace
from .trace_table import StateLike, trace_table

# -- patterns of a TLA+ module's text (TLC's output is read through ``patterns``)

#: A definition at the start of a line: ``Name ==``, ``Name(a, b) ==``,
#: ``RECURSIVE``/``LOCAL`` prefixes allowed (infix operator definitions are
#: not matched; they do not name properties).
_DEFINITION = re.compile(r"^(?:LOCAL\s+)?(?P<name>[A-Za-z_]\w*)\s*(?:\([^=]*\))?\s*==(?!=)")
#: An ``INSTANCE`` statement, bare or named (``Core == INSTANCE EmbeddingCache``).
_INSTANCE = re.compile(
    r"^\s*(?:LOCAL\s+)?(?:[A-Za-z_]\w*\s*(?:\([^=]*\))?\s*==\s*)?INSTANCE\s+(?P<module>\w+)"
)
_BARE_INSTANCE = re.compile(r"^\s*(?:LOCAL\s+)?INSTANCE\s")
_MODULE_END = re.compile(r"^={4,}")
_SEPARATOR = re.compile(r"^-{4,}")


@dataclass(frozen=True)
class SourcePosition:
    """A source range TLC printed (1-based lines and columns)."""

    module: str
    line: int
    col: int
    end_line: int
    end_col: int

    def __str__(self) -> str:
        return (
            f"line {self.line}, col {self.col} to line {self.end_line}, col {self.end_col} "
            f"of module {self.module}"
        )


@dataclass(frozen=True)
class Violation:
    """What a failed run violated, named.

    ``kind`` is ``invariant``, ``action-property``, ``temporal`` or
    ``deadlock``; ``name`` the definition's name (``Module!Def`` when it was
    found from a position in a module other than the root's), or the name TLC
    printed; ``position`` the range TLC printed instead of a name, if any;
    ``excerpt`` the source text of that range.
    """

    kind: str
    name: str | None
    position: SourcePosition | None = None
    excerpt: str = ""

    def headline(self) -> str:
        """One line for people: ``Action property CoreSpec (EmbeddingCache!Spec, ...)``."""
        if self.kind == "deadlock":
            return "Deadlock reached: the last state below has no successor."
        if self.kind == "unnamed":
            return "A violation TLC did not name (distributed TLC prints no name)."
        label = {
            "invariant": "Invariant",
            "action-property": "Action property",
            "temporal": "Temporal property",
        }.get(self.kind, self.kind)
        where = ""
        if self.position is not None:
            text = f": {self.excerpt}" if self.excerpt else ""
            where = f" ({self.position}{text})"
        return f"{label} {self.name or '(unnamed)'} is violated{where}."


def parse_position(text: str) -> SourcePosition | None:
    """The first TLC source range in text, or None. O(len(text))."""
    match = patterns.POSITION.search(text)
    if match is None:
        return None
    return SourcePosition(
        module=match.group("module"),
        line=int(match.group("line")),
        col=int(match.group("col")),
        end_line=int(match.group("end_line")),
        end_col=int(match.group("end_col")),
    )


def enclosing_definition(module_text: str, line: int, col: int = 1) -> str | None:
    """The name of the top-level definition whose text contains (line, col).

    A definition starts at the beginning of a line (``Name ==`` or
    ``Name(args) ==``) and extends to the next definition, separator line
    (``----``) or the module's end; positions outside any definition (in a
    comment block before the first one, after the end) give None. The column
    only matters on the definition's first line. A bare ``INSTANCE M`` line
    ends a definition too (it is not part of the one above it; what it means
    at a position is :func:`instanced_module`'s). O(lines up to ``line``).
    """
    lines = module_text.splitlines()
    if not 1 <= line <= len(lines):
        return None
    current: str | None = None
    for number, text in enumerate(lines[:line], start=1):
        if _MODULE_END.match(text) or _SEPARATOR.match(text):
            current = None
            continue
        if _BARE_INSTANCE.match(text):
            current = None
            continue
        match = _DEFINITION.match(text)
        if match is not None and (number < line or col > match.end("name")):
            current = match.group("name")
    return current


def instanced_module(module_text: str, line: int) -> str | None:
    """The module that an ``INSTANCE`` statement on ``line`` imports, or None.

    TLC 2.15 reports an action (or an action property's failing step) that
    reaches the root through a bare ``INSTANCE M`` at the position of that
    statement (every action of the policy modules is labelled
    ``line 44, col 1 to line 44, col 29 of module EmbeddingCacheFifo``,
    the line ``INSTANCE EmbeddingCachePolicy``), so the position alone does
    not say which action of ``M`` it was. O(1) after splitting the text.
    """
    lines = module_text.splitlines()
    if not 1 <= line <= len(lines):
        return None
    match = _INSTANCE.match(lines[line - 1])
    return None if match is None else match.group("module")


def source_excerpt(module_text: str, position: SourcePosition, limit: int = 80) -> str:
    """The text of a source range, on one line, cut at ``limit`` characters. O(range)."""
    lines = module_text.splitlines()
    if not 1 <= position.line <= position.end_line <= len(lines):
        return ""
    if position.line == position.end_line:
        text = lines[position.line - 1][position.col - 1 : position.end_col]
    else:
        parts = [lines[position.line - 1][position.col - 1 :]]
        parts += lines[position.line : position.end_line - 1]
        parts.append(lines[position.end_line - 1][: position.end_col])
        text = " ".join(p.strip() for p in parts)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def find_module(name: str, directories: Iterable[Path]) -> str | None:
    """The text of module ``name`` (``name.tla``) in the first directory holding it,
    directly or in a subfolder (tla/ keeps its modules in subfolders: core/,
    policies/<policy>/, ...; a module name is unique in it). O(files under the
    directories)."""
    for directory in map(Path, directories):
        found = [directory / f"{name}.tla", *sorted(directory.rglob(f"{name}.tla"))]
        path = next((p for p in found if p.is_file()), None)
        if path is not None:
            return path.read_text(encoding="utf-8")
    return None


def name_position(
    position: SourcePosition,
    directories: Iterable[Path],
    candidates: Sequence[str] = (),
) -> tuple[str | None, str]:
    """Name the definition at ``position`` and give its source excerpt.

    The name is the enclosing definition as ``Module!Name``; when exactly one
    of ``candidates`` (the config's properties that TLC did not name) exists,
    the result reads ``Candidate = Module!Name``, because TLC reports the
    position inside the candidate's expansion (``CoreSpec == Core!Spec`` is
    reported at ``[][Next]_vars`` of ``Spec`` in ``EmbeddingCache``).
    O(module size).
    """
    text = find_module(position.module, directories)
    if text is None:
        inner = None
        excerpt = ""
    else:
        inner = enclosing_definition(text, position.line, position.col)
        excerpt = source_excerpt(text, position)
    qualified = f"{position.module}!{inner}" if inner else None
    if inner is not None and inner in candidates:
        return inner, excerpt
    if len(candidates) == 1:
        only = candidates[0]
        return (f"{only} = {qualified}" if qualified else only), excerpt
    return qualified, excerpt


def identify_violation(
    raw_output: str,
    directories: Iterable[Path],
    properties: Sequence[str] = (),
) -> Violation | None:
    """What the run violated, named (None if TLC reported no violation).

    ``properties`` are the config's PROPERTIES, used to attribute a position
    (see :func:`name_position`) and a temporal violation when there is one.
    O(output size + module size).
    """
    dirs = list(directories)
    if match := patterns.INVARIANT.search(raw_output):
        return Violation("invariant", match.group("name"))
    if match := patterns.ACTION_PROPERTY.search(raw_output):
        what = match.group("what")
        position = parse_position(what)
        if position is None:
            return Violation("action-property", what)
        named = [p for p in properties if re.search(rf"\b{re.escape(p)}\b", raw_output) is None]
        name, excerpt = name_position(position, dirs, named)
        return Violation("action-property", name, position, excerpt)
    if patterns.TEMPORAL.search(raw_output):
        return Violation("temporal", properties[0] if len(properties) == 1 else None)
    if patterns.DEADLOCK.search(raw_output):
        return Violation("deadlock", None)
    if patterns.BEHAVIOUR.search(raw_output):  # distributed TLC prints no name
        return Violation("unnamed", None)
    return None


def raw_labels(raw_output: str) -> dict[int, str]:
    """TLC's own label of each state of the behaviour (``State i: <label>``). O(output)."""
    return {
        int(m.group("n")): m.group("label").removeprefix("<").removesuffix(">")
        for m in patterns.STATE_HEADER.finditer(raw_output)
    }


#: How the modules name the action of an operation recorded in ``lastOp``:
#: the glue (EmbeddingCachePolicy) ``Cache<Op>`` (``CacheAlloc``,
#: ``CacheMarkReady``, ...), the core (EmbeddingCache) ``<Op>``.
ACTION_PREFIXES = ("Cache", "")

_LAST_OP = re.compile(r'op \|-> "(?P<op>\w+)"')
_LAST_KEY = re.compile(r"key \|-> (?P<key>[^,\]]+)")
_LAST_N = re.compile(r"n \|-> (?P<n>\d+)")


def operation_call(last_op: str) -> tuple[str, str] | None:
    """``(op, call)`` of a ``lastOp`` value, e.g. ``("Alloc", "Alloc(k2, 3)")``;
    None for the initial record or text that is not one. O(len(last_op))."""
    op = _LAST_OP.search(last_op)
    if op is None or op.group("op") == "Init":
        return None
    key, n = _LAST_KEY.search(last_op), _LAST_N.search(last_op)
    args = [m.group(g).strip().strip('"') for m, g in ((key, "key"), (n, "n")) if m is not None]
    if op.group("op") not in ("Alloc", "AllocFail"):
        args = args[:1]  # only alloc has a size
    return op.group("op"), f"{op.group('op')}({', '.join(args)})"


def defines(module_text: str, name: str) -> bool:
    """True if the module defines ``name`` at the start of a line. O(module size)."""
    return any(
        (m := _DEFINITION.match(line)) is not None and m.group("name") == name
        for line in module_text.splitlines()
    )


def instance_action(module: str, op: str, directories: Iterable[Path]) -> str | None:
    """The action of the INSTANCE'd ``module`` that performs operation ``op``
    (``CacheAlloc`` for ``Alloc`` in EmbeddingCachePolicy), by the naming
    rule :data:`ACTION_PREFIXES`; None if the module defines none. O(module size)."""
    text = find_module(module, directories)
    if text is None:
        return None
    return next(
        (f"{p}{op}" for p in ACTION_PREFIXES if defines(text, f"{p}{op}")),
        None,
    )


def step_label(step: StateLike, directories: Iterable[Path], raw_label: str | None = None) -> str:
    """A readable action name for a step: ``definition: operation``.

    The definition comes from TLC's label. A named action keeps its name
    (``SaverAlloc``); a position (the steps of a conjunctive next-state
    relation, ``Action line 34, col 43 to ... of module M``) becomes the
    enclosing definition (``CheckSpec``); a position on an ``INSTANCE M``
    line (every action of a policy module, which reaches the root through
    the policy's bare ``INSTANCE EmbeddingCachePolicy``) becomes the action
    of ``M`` that performed the step's operation (``CacheAlloc``), read
    from the history variable ``lastOp``. The operation, from ``lastOp``,
    is appended when this step recorded one (a callers' step that only
    changes the callers' variables, ``SaverStart``, records none), e.g.
    ``CheckSpec: Alloc(k2, 3)`` or ``CacheMarkReady: MarkReady(k1)``.
    ``Init``, ``Stuttering`` and ``Back to state i`` stay as they are.
    O(module size).
    """
    label = step.action
    if label in ("Init", "Stuttering") or label.startswith("Back to"):
        return label
    dirs = list(directories)
    last_op = step.state.get("lastOp", "")
    operation = operation_call(last_op) if "lastOp" in step.changed else None
    position = parse_position(raw_label or "")
    if position is not None:
        text = find_module(position.module, dirs)
        target = instanced_module(text, position.line) if text else None
        if target is not None:
            # Every action of the instanced module records its operation,
            # even one that leaves lastOp as it was (a repeated AllocFail).
            operation = operation_call(last_op)
            action = instance_action(target, operation[0], dirs) if operation else None
            label = action or f"{position.module}!INSTANCE {target}"
        else:
            inner = enclosing_definition(text, position.line, position.col) if text else None
            label = inner or f"{position.module}:{position.line}"
    if operation is None:
        return label
    call = operation[1]
    return call if label in ("Next", call) else f"{label}: {call}"


def labelled_trace_table(
    steps: Sequence[StateLike],
    directories: Iterable[Path] = (),
    labels: Mapping[int, str] | None = None,
) -> str:
    """The counterexample as a table: step, readable action, what changed.

    ``labels`` are TLC's raw state labels (:func:`raw_labels`), which keep
    the positions that ``output.CounterexampleState.action`` drops. O(trace size).
    """
    dirs = list(directories)
    if not steps:
        return "(no steps)"

    def action_of(step: StateLike) -> str:
        raw = None if labels is None else labels.get(step.number)
        return step_label(step, dirs, raw)

    return trace_table(steps, action_of)


def explain_failure(
    raw_output: str,
    directories: Iterable[Path],
    properties: Sequence[str] = (),
) -> str | None:
    """The readable report of a violation: what, by name, and the step table.

    For invariants, action properties (including refinement checks that TLC
    reports by position), temporal properties and deadlocks; None when the
    output holds no violation. ``directories`` are searched for the modules
    that positions refer to (the model's tla/ directory). O(output size +
    module size).
    """
    dirs = list(directories)
    violation = identify_violation(raw_output, dirs, properties)
    if violation is None:
        return None
    lines = [violation.headline()]
    if patterns.BEHAVIOUR.search(raw_output):
        lines.append(labelled_trace_table(parse_trace(raw_output), dirs, raw_labels(raw_output)))
    else:
        lines.append("(TLC printed no behaviour)")
    return "\n".join(lines)
