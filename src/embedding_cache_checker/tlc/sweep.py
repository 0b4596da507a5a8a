"""Size a bug model (spec/POLICIES.md section 6): check it at every shape of a small
grid of keys and blocks, and report the smallest shape at which TLC still reports
the model's violation, with the counterexample's length in steps.

``embedding-cache tlc --sweep MODEL ...`` runs it. Each shape is the model's own
config with ``Keys`` and ``N`` replaced (its pin depth, level and overrides kept),
written to a temporary file; TLC runs breadth-first, so each counterexample is a
shortest one at that shape.
"""

from __future__ import annotations

import dataclasses
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..text_table import render_table
from .manifest import PASS, Model
from .report import counterexample_steps
from .runner import run_model

#: The grid swept by default: section 6's 1..3 keys and 1..3 blocks.
KEYS = (1, 2, 3)
BLOCKS = (1, 2, 3)

_KEYS_LINE = re.compile(r"^(\s*)Keys\s*=\s*\{[^}]*\}", re.MULTILINE)
_BLOCKS_LINE = re.compile(r"^(\s*)N\s*=\s*\d+", re.MULTILINE)


class SweepError(ValueError):
    """A model cannot be swept: no expected violation, or no Keys/N to vary."""


@dataclass(frozen=True)
class ShapeResult:
    """One shape of a sweep: what TLC reported, and the counterexample's length."""

    keys: int
    blocks: int
    result: str
    steps: int | None  # transitions in the counterexample; None without one
    seconds: float


def shaped_config(text: str, keys: int, blocks: int) -> str:
    """``text`` (a config) with ``Keys = {k1, ..}`` of ``keys`` keys and ``N = blocks``.
    O(size).

    Raises:
        SweepError: the config sets no ``Keys`` set or no ``N``.
    """
    names = ", ".join(f"k{i}" for i in range(1, keys + 1))
    text, found_keys = _KEYS_LINE.subn(lambda m: f"{m.group(1)}Keys = {{{names}}}", text)
    text, found_n = _BLOCKS_LINE.subn(lambda m: f"{m.group(1)}N = {blocks}", text)
    if not (found_keys and found_n):
        raise SweepError("its config sets no Keys = {...} or no N = n to vary")
    return text


def sweep(
    model: Model,
    tla_dir: Path,
    java: Path,
    jar: Path,
    keys: Sequence[int] = KEYS,
    blocks: Sequence[int] = BLOCKS,
) -> list[ShapeResult]:
    """Check ``model`` at every (keys, blocks) of the grid, one worker each (BFS: a
    shortest counterexample). O(shapes x one TLC run).

    Raises:
        SweepError: ``model`` expects no violation, or its config cannot be varied.
    """
    if model.expect == PASS:
        raise SweepError(f"{model.name} expects no violation: only a bug model is sized")
    text = (tla_dir / model.config).read_text(encoding="utf-8")
    out: list[ShapeResult] = []
    with tempfile.TemporaryDirectory(prefix=f"sweep-{model.name}-") as work:
        for k in keys:
            for n in blocks:
                config = Path(work) / f"{model.name}-k{k}-n{n}.cfg"
                config.write_text(shaped_config(text, k, n), encoding="utf-8")
                shaped = dataclasses.replace(model, config=str(config))
                result = run_model(shaped, tla_dir, java, jar, 1)
                steps = counterexample_steps(result) if result.result == model.expect else None
                out.append(ShapeResult(k, n, result.result, steps, result.seconds))
    return out


def smallest(model: Model, results: Sequence[ShapeResult]) -> ShapeResult | None:
    """The shape with the fewest keys, then blocks, at which TLC reported ``model``'s
    violation; None if no shape did. O(shapes)."""
    caught = [r for r in results if r.result == model.expect]
    return min(caught, key=lambda r: (r.keys, r.blocks), default=None)


def sweep_table(model: Model, results: Sequence[ShapeResult]) -> str:
    """One row per shape, and the smallest that still reports the violation. O(shapes)."""
    rows = [
        [
            str(r.keys),
            str(r.blocks),
            r.result,
            "-" if r.steps is None else str(r.steps),
            f"{r.seconds:.1f}",
        ]
        for r in results
    ]
    table = render_table(["keys", "blocks", "result", "steps", "seconds"], rows, right={0, 1, 3, 4})
    best = smallest(model, results)
    verdict = (
        f"smallest shape reporting {model.expect}: {best.keys} keys, {best.blocks} blocks, "
        f"{best.steps} steps"
        if best is not None
        else f"no shape of the grid reports {model.expect}"
    )
    return f"{model.name} ({model.expect})\n{table}\n{verdict}"
