"""Time the operation mix on the running build, and run it on another build in a child.

The build is fixed when ``embedding_cache`` is imported (``EMBEDDING_CACHE_CHECKED``),
so each build runs in its own interpreter: ``run_build`` starts
``python -m embedding_cache_bench.runner`` with the variable set and reads back
one JSON object. In the child, ``measure`` records one script per pool size
(generation is never timed), then, for each repeat, replays every size's
script on a fresh cache, sizes interleaved in rotating order
(``rounds.rotating_rounds``) so that machine noise hits them alike, timing
only the measured window's calls. ``time_script``, ``time_calls``,
``time_by_kind`` and ``time_each_call`` are the timed loops every bench
section uses.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from embedding_cache import BUILD_NAME, EmbeddingCache

from . import rounds, workload

#: ``EMBEDDING_CACHE_CHECKED`` value for each build the bench runs.
BUILD_ENV = {"default": "0", "checked": "1"}


class BenchError(RuntimeError):
    """A child run failed; the message carries the end of its stderr."""


#: A clock in integer nanoseconds (``time.perf_counter_ns`` unless said otherwise).
Clock = Callable[[], int]


#: No exception is tolerated: a call that raises ends the run.
STRICT: tuple[type[BaseException], ...] = ()


def time_script(
    script: workload.Script,
    cache_factory: Callable[[int], workload.Cache] = EmbeddingCache,
    clock: Clock = time.perf_counter_ns,
    tolerate: tuple[type[BaseException], ...] = STRICT,
) -> float:
    """Replay ``script`` on a fresh cache; nanoseconds per call of the measured window.

    ``cache_factory(num_blocks)`` builds the cache (default: ``EmbeddingCache``);
    ``clock`` times the window (default: wall time; ``time.thread_time_ns``
    counts only this thread's CPU time, so a busy machine disturbs it less).
    The warm-up prefix runs untimed; the window is timed by ``time_calls``,
    which lets the calls raise ``tolerate`` (see there).
    """
    cache = cache_factory(script.shape.num_blocks)
    calls = workload.bind(script.ops, cache)
    for method, args in calls[: script.warmup]:
        method(*args)
    return time_calls(calls[script.warmup :], clock, tolerate)


def time_calls(
    calls: Sequence[workload.BoundCall],
    clock: Clock = time.perf_counter_ns,
    tolerate: tuple[type[BaseException], ...] = STRICT,
) -> float:
    """Make ``calls`` in a tight loop; nanoseconds per call (0.0 for none).

    The garbage collector is paused during the timed loop (as ``timeit``
    does) so that a collection triggered by one size's garbage is not charged
    to another's. With ``tolerate``, each call runs inside a ``try`` that
    swallows those exceptions (as ``compare.py`` times a stream recorded on
    another implementation, whose calls may be illegal here): the ``try`` is
    then paid by every call, so time every implementation compared the same way.
    """
    if not calls:
        return 0.0
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = clock()
        if tolerate:
            for method, args in calls:
                # A bare try, as compare.py's loop: contextlib.suppress would add a
                # context manager's cost to every timed call.
                try:  # noqa: SIM105
                    method(*args)
                except tolerate:
                    pass
        else:
            for method, args in calls:
                method(*args)
        elapsed = clock() - start
    finally:
        if was_enabled:
            gc.enable()
    return elapsed / len(calls)


def refused_calls(
    script: workload.Script,
    cache_factory: Callable[[int], workload.Cache],
    tolerate: tuple[type[BaseException], ...],
) -> int:
    """How many of ``script``'s calls raise one of ``tolerate`` on a fresh cache (untimed).
    O(calls)."""
    cache = cache_factory(script.shape.num_blocks)
    refused = 0
    for method, args in workload.bind(script.ops, cache):
        try:
            method(*args)
        except tolerate:
            refused += 1
    return refused


def _timer_overhead_ns(samples: int = 2001, clock: Clock = time.perf_counter_ns) -> float:
    """Median cost of one ``clock(); call(); clock()`` around a call that does nothing."""

    def noop(*args: object) -> None:
        return None

    costs = []
    for _ in range(samples):
        start = clock()
        noop("key")
        costs.append(clock() - start)
    return float(statistics.median(costs))


def time_by_kind(
    script: workload.Script,
    cache_factory: Callable[[int], workload.Cache] = EmbeddingCache,
    clock: Clock = time.perf_counter_ns,
) -> dict[str, float]:
    """Replay ``script``, timing each measured call; mean ns per call of each operation.

    The warm-up prefix runs untimed; the window is timed by ``time_each_call``.
    """
    cache = cache_factory(script.shape.num_blocks)
    calls = workload.bind(script.ops, cache)
    for method, args in calls[: script.warmup]:
        method(*args)
    window = script.ops[script.warmup :]
    return time_each_call(calls[script.warmup :], [name for name, _ in window], clock)


def time_each_call(
    calls: Sequence[workload.BoundCall],
    names: Sequence[str],
    clock: Clock = time.perf_counter_ns,
) -> dict[str, float]:
    """Make ``calls``, timing each; mean ns per call by operation (``names[i]`` is call i's).

    Each call is timed on its own, so the timer's cost (measured on a call
    that does nothing, and subtracted) is included once per call: the figures
    are for comparing sizes and builds, and the mix's ns/op (``time_calls``)
    is the accurate total. The garbage collector is paused, as in ``time_calls``.
    """
    elapsed = [0] * len(calls)
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for i, (method, args) in enumerate(calls):
            start = clock()
            method(*args)
            elapsed[i] = clock() - start
        overhead = _timer_overhead_ns(clock=clock)
    finally:
        if was_enabled:
            gc.enable()
    totals: dict[str, int] = {}
    counts: dict[str, int] = {}
    for name, ns in zip(names, elapsed, strict=True):
        totals[name] = totals.get(name, 0) + ns
        counts[name] = counts.get(name, 0) + 1
    return {name: max(0.0, totals[name] / counts[name] - overhead) for name in sorted(totals)}


def measure(sizes: Sequence[int], n_ops: int, repeat: int, seed: int) -> dict[str, Any]:
    """Record and time the mix at each pool size in the running build; a JSON-ready dict.

    Each repeat replays each size twice: once timing the whole measured window
    (the ns/op figure), once timing every call (the per-operation breakdown);
    the sizes' order rotates from repeat to repeat (``rounds.rotating_rounds``).
    O(repeat x sizes x (warm-up + n_ops)) calls.

    Raises:
        ValueError: ``repeat`` < 1.
    """
    if repeat < 1:  # before the scripts are recorded, not after
        raise ValueError(f"repeat must be >= 1, got {repeat}")
    scripts = [workload.record(size, n_ops, seed) for size in sizes]

    def warm_up() -> None:
        # The interpreter's first pass over this code (specialisation, allocator
        # arenas) is slower and would be charged to one size: one untimed replay.
        if scripts:
            time_script(min(scripts, key=lambda script: len(script.ops)))

    timed = rounds.rotating_rounds(
        range(len(scripts)),
        repeat,
        lambda i, _round: (time_script(scripts[i]), time_by_kind(scripts[i])),
        warm_up=warm_up,
    )
    runs = [[total for total, _ in timed[i]] for i in range(len(scripts))]
    kind_runs = [[by_kind for _, by_kind in timed[i]] for i in range(len(scripts))]
    results = []
    for script, times, kinds in zip(scripts, runs, kind_runs, strict=True):
        stats = script.stats()
        by_kind = {name: statistics.median(run[name] for run in kinds) for name in kinds[0]}
        results.append(
            {
                "num_blocks": script.shape.num_blocks,
                "catalogue": script.shape.catalogue,
                "item_sizes": list(script.shape.item_sizes),
                "warmup_ops": script.warmup,
                "ops": stats.ops,
                "ns_per_op": statistics.median(times),
                "ns_per_op_runs": times,
                "ns_per_call_by_op": by_kind,
                "op_counts": workload.op_counts(script.ops[script.warmup :]),
                "lookups": stats.lookups,
                "hits": stats.hits,
                "hit_ratio": stats.hit_ratio,
                "allocs": stats.allocs,
                "evictions": stats.evictions,
                "alloc_failures": stats.alloc_failures,
            }
        )
    return {"build": BUILD_NAME, "repeat": repeat, "seed": seed, "results": results}


def run_build(
    build: str, sizes: Sequence[int], n_ops: int, repeat: int, seed: int
) -> dict[str, Any]:
    """Run ``measure`` in a child interpreter on ``build`` and return its JSON.

    Raises:
        ValueError: ``build`` is not one of ``BUILD_ENV``.
        BenchError: the child failed or ran another build than asked.
    """
    if build not in BUILD_ENV:
        raise ValueError(f"unknown build {build!r}; choose from {', '.join(BUILD_ENV)}")
    argv = [
        sys.executable,
        "-m",
        "embedding_cache_bench.runner",
        "--sizes",
        ",".join(map(str, sizes)),
        "--ops",
        str(n_ops),
        "--repeat",
        str(repeat),
        "--seed",
        str(seed),
    ]
    env = {**os.environ, "EMBEDDING_CACHE_CHECKED": BUILD_ENV[build]}
    child = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    if child.returncode != 0:
        raise BenchError(f"{build} build failed (exit {child.returncode}): {child.stderr[-2000:]}")
    lines = child.stdout.strip().splitlines()
    if not lines:
        raise BenchError(f"{build} build printed nothing; stderr: {child.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    if result.get("build") != build:
        raise BenchError(f"asked for the {build} build, the child ran {result.get('build')!r}")
    return result


def parse_sizes(text: str) -> list[int]:
    """``"256,4096"`` -> ``[256, 4096]``; each size must be a positive int."""
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"sizes must be comma-separated ints, not {text!r}"
        ) from None
    if not sizes or any(size < 1 for size in sizes):
        raise argparse.ArgumentTypeError(f"sizes must be positive ints, not {text!r}")
    return sizes


def main(argv: Sequence[str] | None = None) -> int:
    """Child entry point: measure the running build, print one JSON line."""
    parser = argparse.ArgumentParser(prog="python -m embedding_cache_bench.runner")
    parser.add_argument("--sizes", type=parse_sizes, required=True)
    parser.add_argument("--ops", type=int, required=True)
    parser.add_argument("--repeat", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.sizes, args.ops, args.repeat, args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
