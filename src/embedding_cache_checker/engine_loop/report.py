"""The real loop's figures: upstream's connector beside the plugin, per policy and
configuration, with the time of ``schedule()`` as a ratio to upstream's.

``python -m embedding_cache_checker.engine_loop.report [--steps N] [--sync] [--json F]``

Every row's engine is fed the same stream (``figures.MATRIX_STREAM``, or ``--steps``
of it) and all of them step in lockstep in one process, in an order that rotates
each step, so machine noise reaches them alike; the collector runs every
``GC_EVERY`` steps, outside the timed calls, and a call in which the process was
descheduled is left out of the times (``loop.DESCHEDULED_SECONDS``). Per row:
checked hits, loads, hits lost, saves never made, never-ready entries and their blocks, whether
``has_pending_push_work()`` stayed True and whether the engine went idle,
preemptions; then the median and p99 of ``schedule()``'s time per call over
upstream's row's, the cost the plugin adds to vLLM's scheduler (fifo/stack is the
like-for-like row: upstream's policy and allocator). Ratios only, never absolute
times.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..text_table import render_table
from .figures import MATRIX_STREAM, counts, matrix_runs
from .loop import EngineLoop, LoopResult, LoopSpec
from .model_dir import write_model_dir
from .stream import ArrivalSpec, generate

#: Steps between two collections of the garbage collector (never inside a timed call).
GC_EVERY = 50
#: The drain's bound, in steps after the last arrival.
IDLE_LIMIT = 3_000


def timed(result: LoopResult) -> list[float]:
    """``schedule()``'s times in the arrival window, descheduled calls left out."""
    window = zip(result.schedule_seconds, result.descheduled, strict=True)
    return [t for t, out in list(window)[: result.window_calls] if not out]


def lockstep(
    runs: list[tuple[str, Any]], stream: ArrivalSpec, model_dir: Path
) -> list[tuple[str, LoopResult]]:
    """Run every (label, settings) on ``stream``, stepping the engines in turn, in a
    rotating order. O(rows x steps x the scheduler's step)."""
    loops = [(label, EngineLoop(LoopSpec(s, stream), model_dir)) for label, s in runs]
    gc.collect()
    gc.disable()
    try:
        for index, events in enumerate(generate(stream)):
            shift = index % len(loops)
            for _, loop in loops[shift:] + loops[:shift]:
                loop.arrive(events)
                loop.step()
            if index % GC_EVERY == 0:
                gc.collect()
        for _, loop in loops:
            loop.window_calls = len(loop.schedule_seconds)
        for index in range(IDLE_LIMIT):
            busy = [loop for _, loop in loops if not loop.idle()]
            if not busy:
                break
            for loop in busy:
                loop.step()
            if index % GC_EVERY == 0:
                gc.collect()
    finally:
        gc.enable()
    return [(label, loop.result()) for label, loop in loops]


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def rows(results: list[tuple[str, LoopResult]]) -> list[dict[str, Any]]:
    """Each run's figures, with its ``schedule()`` median and p99 over upstream's, in
    the arrival window (the same steps for every row)."""
    base = timed(dict(results)["upstream"])
    base_median, base_p99 = statistics.median(base), quantile(base, 0.99)
    out = []
    for label, result in results:
        times = timed(result)
        figures = counts(result)
        figures["label"] = label
        figures["schedule_median_ratio"] = statistics.median(times) / base_median
        figures["schedule_p99_ratio"] = quantile(times, 0.99) / base_p99
        out.append(figures)
    return out


def table(figures: list[dict[str, Any]], title: str) -> str:
    headers = (
        "connector / configuration",
        "hits",
        "loads",
        "lost",
        "never made",
        "never ready",
        "blocks held",
        "push work",
        "idle",
        "preempted",
        "sched p50",
        "sched p99",
    )
    body = [
        (
            f["label"],
            f"{f['hits']:,}",
            f"{f['loads']:,}",
            str(f["lost"]),
            str(f["never_made"]),
            str(f["never_ready"]),
            f"{f['held_blocks']:,}",
            str(f["push_work"]),
            str(f["idle"]),
            f"{f['preemptions']:,}",
            f"{f['schedule_median_ratio']:.2f}x",
            f"{f['schedule_p99_ratio']:.2f}x",
        )
        for f in figures
    ]
    return f"{title}\n" + render_table(headers, body, set(range(1, 12)) - {7, 8})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m embedding_cache_checker.engine_loop.report")
    parser.add_argument("--steps", type=int, default=MATRIX_STREAM.steps)
    parser.add_argument("--sync", action="store_true", help="Scheduler, not AsyncScheduler")
    parser.add_argument("--json", type=Path, help="write the rows as JSON here")
    args = parser.parse_args(argv)
    stream = dataclasses.replace(MATRIX_STREAM, steps=args.steps)
    model_dir = write_model_dir(Path(tempfile.mkdtemp(prefix="embedding-cache-llava-")))
    kind = "Scheduler" if args.sync else "AsyncScheduler"
    figures = rows(lockstep(matrix_runs(not args.sync), stream, model_dir))
    s = matrix_runs(not args.sync)[0][1]
    title = (
        f"vLLM 0.33's {kind}, real loop: {s.ec_blocks:,}-row EC pool, GPU encoder cache "
        f"{s.encoder_cache_size:,}, {s.kv_blocks} KV blocks, {stream.steps:,} steps, "
        f"seed {stream.seed}"
    )
    print(table(figures, title))
    if args.json is not None:
        args.json.write_text(json.dumps({"title": title, "rows": figures}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
