"""Speed against the seed: the default policy's time on compare.py's op mix over the seed's.

The stream is ``shared_mix``'s (compare.py's legal stream), recorded once on
the seed's class; it is then replayed on a fresh cache of the seed and of
each asked policy (fifo, the drop-in, by default: the stream adapts to the
seed's fifo answers, so another policy could find a call illegal), the
implementations alternating and their order rotating each round. The whole
stream is timed (construction is not), in this thread's CPU time
(``policies.CLOCK``) with the garbage collector paused (``runner.time_script``);
compare.py times wall time with it running. ``vs_seed`` is the median of the
per-round ratios, as compare.py's ``ratio_project_over_seed``.
"""

from __future__ import annotations

import gc
import statistics
from collections.abc import Sequence
from typing import Any

from . import implementations, policies, runner, shared_mix, workload

#: Policies timed against the seed by default: the drop-in.
DEFAULT_POLICIES = (policies.BASELINE,)


def seed_script(
    num_blocks: int = shared_mix.NUM_BLOCKS, n_ops: int = shared_mix.N_OPS
) -> workload.Script:
    """compare.py's stream recorded on the seed, as a script timed from its first call."""
    ops = tuple(shared_mix.record(implementations.SEED_FACTORY(num_blocks), n_ops))
    shape = workload.Shape(num_blocks, shared_mix.ITEM_SIZES, shared_mix.CATALOGUE)
    # Outcomes are not recorded (time_script does not look at them).
    return workload.Script(shape, shared_mix.SEED, ops, (None,) * len(ops), warmup=0)


def measure(
    names: Sequence[str] = DEFAULT_POLICIES,
    *,
    allocators: Sequence[str] | None = None,
    n_ops: int = shared_mix.N_OPS,
    repeat: int = 7,
    clock: runner.Clock = policies.CLOCK,
) -> dict[str, Any]:
    """ns per call of the seed and of each policy in ``names``; ratios to the seed."""
    if repeat < 1:
        raise ValueError(f"repeat must be >= 1, got {repeat}")
    script = seed_script(n_ops=n_ops)
    impls = implementations.factories(names, allocators=allocators)
    order = list(impls)
    runs: dict[str, list[float]] = {impl: [] for impl in order}
    gc.freeze()  # the script stays put: each replay's gc.collect() need not walk it
    try:
        runner.time_script(script, impls[order[0]], clock)  # untimed: first-pass costs
        for round_ in range(repeat):
            shift = round_ % len(order)
            for impl in order[shift:] + order[:shift]:
                runs[impl].append(runner.time_script(script, impls[impl], clock))
    finally:
        gc.unfreeze()
    seed_runs = runs[implementations.SEED]
    rows = [
        {
            "impl": impl,
            "ns_per_op": statistics.median(times),
            "ns_per_op_runs": times,
            "vs_seed": statistics.median(
                mine / theirs if theirs else 0.0
                for mine, theirs in zip(times, seed_runs, strict=True)
            ),
        }
        for impl, times in runs.items()
    ]
    return {
        "num_blocks": shared_mix.NUM_BLOCKS,
        "calls": script.measured_ops,
        "stream": shared_mix.fingerprint(script.ops),
        "repeat": repeat,
        "rows": rows,
    }
