"""Speed against the seed: the default policy's time on compare.py's op mix over the seed's,
and the contiguous configuration's (``allocator="extents", contiguity=4``, as
``compare.py --kwargs '{"allocator": "extents", "contiguity": 4}'`` times it).

The stream is ``shared_mix``'s (compare.py's legal stream), recorded once on
the seed's class; it is then replayed on a fresh cache of the seed and of
each asked policy (by default ``implementations.BASELINE``, the seed's drop-in), the
implementations alternating and their order rotating each round
(``rounds.rotating_rounds``). The whole stream is timed (construction is not),
in this thread's CPU time (``rounds.CLOCK``) with the garbage collector paused
(``runner.time_script``); compare.py times wall time with it running.

The stream adapts to the seed's answers, so a configuration that evicts
otherwise (another policy, or contiguity's extra victims) finds some calls
illegal: it loads or releases an entry it no longer holds. As compare.py does,
every implementation's calls run inside a ``try`` that swallows the seed's
two error kinds (``TOLERATED``), and each row counts the calls refused
(``refused_calls``; 0 for the seed and its drop-in).
``vs_seed`` is the median of the per-round ratios, as compare.py's
``ratio_project_over_seed``.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from . import implementations, rounds, runner, shared_mix, workload

#: Policies timed against the seed by default: the drop-in.
DEFAULT_POLICIES = (implementations.BASELINE,)

#: What a replayed call may raise without ending the run: the seed's errors (its asserts,
#: and KeyError for an absent key), which every typed error of the cache also is.
TOLERATED: tuple[type[BaseException], ...] = (AssertionError, KeyError)

#: The contiguity bound timed beside each policy on the extents allocator: the
#: contiguous configuration whose speed target is ``beyond.TARGET_CONTIGUOUS_SPEED``.
DEFAULT_CONTIGUITY = (4,)


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
    contiguity: Sequence[int] = DEFAULT_CONTIGUITY,
    n_ops: int = shared_mix.N_OPS,
    repeat: int = 7,
    clock: runner.Clock = rounds.CLOCK,
) -> dict[str, Any]:
    """ns per call of the seed and of each policy in ``names`` (each allocator, and on the
    extents allocator each bound of ``contiguity``); ratios to the seed.

    O(repeat x implementations x calls).

    Raises:
        ValueError: ``repeat`` < 1, or an unknown policy or allocator.
    """
    script = seed_script(n_ops=n_ops)
    impls = implementations.factories(names, allocators=allocators, contiguity=contiguity)
    first = next(iter(impls.values()))
    with rounds.frozen_gc():  # the script stays put while the implementations are timed
        runs = rounds.rotating_rounds(
            impls,
            repeat,
            lambda impl, _round: runner.time_script(script, impls[impl], clock, TOLERATED),
            warm_up=lambda: runner.time_script(script, first, clock, TOLERATED),  # first pass
        )
    seed_runs = runs[implementations.SEED]
    rows = [
        {
            "impl": impl,
            "ns_per_op": statistics.median(times),
            "ns_per_op_runs": times,
            "vs_seed": rounds.median_ratio(times, seed_runs),
            "refused_calls": runner.refused_calls(script, impls[impl], TOLERATED),
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
