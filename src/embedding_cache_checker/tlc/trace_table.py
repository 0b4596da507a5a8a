"""A counterexample's steps as a table: step, action, and what each step changed.

The one renderer of a behaviour, for ``report`` (a failed model's trace) and
``counterexample`` (the same table with readable action labels). It needs of
a step only :class:`StateLike` (``output.CounterexampleState`` is one), so it imports no
other module of the package.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from typing import Protocol

from ..text_table import render_table  # the project's one table renderer

#: Width at which a counterexample's changed values are wrapped.
VALUE_WIDTH = 88


class StateLike(Protocol):
    """What the step table needs of a counterexample step (``output.CounterexampleState``)."""

    number: int
    action: str
    state: dict[str, str]
    changed: dict[str, str]


def trace_table(
    steps: Sequence[StateLike], action_of: Callable[[StateLike], str] | None = None
) -> str:
    """A counterexample as a table: step, action, and what the step changed.

    ``action_of`` names a step's action (default: ``step.action``; the
    counterexample module passes its readable labels). O(trace size).
    """
    rows: list[list[str]] = []
    for step in steps:
        action = step.action if action_of is None else action_of(step)
        if not step.changed:
            rows.append([str(step.number), action, "(nothing)" if step.state else ""])
            continue
        first = True
        for name, value in step.changed.items():
            wrapped = textwrap.wrap(
                f"{name}' = {value}", VALUE_WIDTH, subsequent_indent="    "
            ) or [""]
            for line in wrapped:
                rows.append(
                    [
                        str(step.number) if first else "",
                        action if first else "",
                        line,
                    ]
                )
                first = False
    return render_table(["step", "action", "changes"], rows, right={0})
