"""The leak figures as a table: upstream's order against the plugin, per configuration.

``python -m embedding_cache_checker.engine.report [--blocks N] [--steps S] [--seed K]``
runs upstream's scheduler and class, then, for every policy x configuration of
``figures``, the project's cache inside the unchanged scheduler (vLLM's order)
and the plugin (the safe order), on the same stream, and prints one row per run
(docs/VLLM.md quotes them). Deterministic but for the time column.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence

from ..text_table import render_table
from .figures import LEAK, leak_runs
from .run import EngineSpec, RunResult, run

HEADERS = (
    "scheduler",
    "cache",
    "hits",
    "lost",
    "never made",
    "never ready",
    "blocks held",
    "push work",
    "ms/step",
)


def row(scheduler: str, cache: str, result: RunResult) -> list[str]:
    """One run's cells, in ``HEADERS``' order."""
    c, e = result.counters, result.end
    per_step = 1e3 * sum(c.step_seconds) / max(1, c.steps)
    return [
        scheduler,
        cache,
        f"{c.hits:,}",
        f"{c.checked_hits_lost:,}",
        f"{c.saves_never_made:,}",
        f"{e.never_ready:,}",
        f"{e.held_blocks:,}",
        str(e.pending_push_work),
        f"{per_step:.3f}",
    ]


def table(blocks: int, steps: int, seed: int) -> str:
    """Every run's row, upstream's first. O(runs x stream)."""
    settings = dataclasses.replace(LEAK[0], num_blocks=blocks)
    stream = dataclasses.replace(LEAK[1], steps=steps, seed=seed)
    rows = [
        row(scheduler, cache, run(EngineSpec(stream, settings, choice)))
        for scheduler, cache, choice in leak_runs()
    ]
    return render_table(HEADERS, rows, right=range(2, len(HEADERS)))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m embedding_cache_checker.engine.report")
    parser.add_argument("--blocks", type=int, default=LEAK[0].num_blocks)
    parser.add_argument("--steps", type=int, default=LEAK[1].steps)
    parser.add_argument("--seed", type=int, default=LEAK[1].seed)
    args = parser.parse_args(argv)
    print(f"{args.blocks:,} blocks, {args.steps:,} steps, seed {args.seed}")
    print(table(args.blocks, args.steps, args.seed))


if __name__ == "__main__":
    main()
