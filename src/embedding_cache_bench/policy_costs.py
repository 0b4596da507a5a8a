"""Per-operation cost of each eviction policy (``bench --policies``), timed side by side.

Timed in one process, after the simulations: per workload and pool, each
policy's calls on a prefix of the stream are recorded once (``record_calls``,
so the timed loop only calls the cache), then replayed on a fresh cache
``repeat`` times, the policies alternating (their order rotating each round:
``rounds.rotating_rounds``), timing only the window after the warm-up, in this
thread's CPU time (``rounds.CLOCK``); medians are reported, and ratios to the
baseline (``implementations.BASELINE``) are medians of the per-round ratios.
ns/op is per cache call. The small-entry realistic mix of ``workload``
(``MIX_WORKLOAD``) is timed the same way. Nothing here asserts a speed.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from . import rounds, runner, workload
from .implementations import BASELINE, FactoryFor, cache_factory
from .streams import ITEM_BLOCKS, Stream

#: Name of the small-entry realistic mix (``workload.record``) in the cost table.
MIX_WORKLOAD = "mix"


def record_calls(
    stream: Stream, cache: workload.Cache, warmup: int, window: int
) -> workload.Script:
    """Serve requests ``[0, warmup + window)`` of ``stream``, recording every call.

    The script's measured part starts at request ``warmup``. Alloc outcomes keep
    the eviction count but not the block ids (they would take gigabytes here), so
    ``Script.stats`` works but ``workload.replay`` does not reproduce them.
    O(warmup + window) calls of the cache.
    """
    ops: list[workload.Op] = []
    outcomes: list[workload.Outcome] = []
    pool = workload.cache_blocks(cache)
    start: int | None = None
    for i in range(min(len(stream.keys), warmup + window)):
        if i == warmup:
            start = len(ops)
        key, size = stream.keys[i], stream.sizes[i]
        entry = cache.pin_if_ready(key)
        ops.append(("pin_if_ready", (key,)))
        outcomes.append(workload.lookup_outcome(entry))
        if entry is not None:
            if entry.ready:
                cache.unpin(key)
                ops.append(("unpin", (key,)))
                outcomes.append(None)
            continue
        if size > pool:  # larger than the pool: not allocated (alloc would raise)
            continue
        before = len(cache)
        ops.append(("alloc", (key, size)))
        if cache.alloc(key, size) is None:
            outcomes.append(None)
            continue
        outcomes.append(((), before + 1 - len(cache)))
        cache.mark_ready(key)
        ops.append(("mark_ready", (key,)))
        outcomes.append(None)
    shape = workload.Shape(pool, ITEM_BLOCKS, stream.spec.items)
    start = len(ops) if start is None else start
    return workload.Script(shape, stream.spec.seed, tuple(ops), tuple(outcomes), start)


def time_policies(
    scripts: Mapping[str, workload.Script],
    repeat: int,
    factory_for: FactoryFor = cache_factory,
) -> dict[str, dict[str, Any]]:
    """Time each policy's script on fresh caches of that policy, alternating policies.

    Each round replays every policy's script twice (the whole window timed, then
    every call timed on its own for the per-operation breakdown); the order of
    the policies rotates from round to round (``rounds.rotating_rounds``).
    Returns per policy its ns/op runs and medians, per-operation costs and
    operation counts, and, against
    ``BASELINE`` (if present): ``ns_per_op_ratio``, the median of the per-round
    ratios, and ``same_mix_ratio``, both policies' per-call costs weighted by the
    baseline's operation counts (the same work for both).
    O(repeat x policies x calls).

    Raises:
        ValueError: ``repeat`` < 1.
    """
    names = list(scripts)
    factories = {name: factory_for(name) for name in names}

    def both(name: str, _round: int) -> tuple[float, dict[str, float]]:
        script, factory = scripts[name], factories[name]
        return (
            runner.time_script(script, factory, rounds.CLOCK),
            runner.time_by_kind(script, factory, rounds.CLOCK),
        )

    def warm_up() -> None:
        # One untimed replay: the first pass over this code is slower.
        for name in names[:1]:
            runner.time_script(scripts[name], factories[name])

    with rounds.frozen_gc():  # the scripts stay put while the policies are timed
        timed = rounds.rotating_rounds(names, repeat, both, warm_up=warm_up)
    runs = {name: [total for total, _ in timed[name]] for name in names}
    kinds = {name: [by_kind for _, by_kind in timed[name]] for name in names}
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        by_kind = {op: statistics.median(run[op] for run in kinds[name]) for op in kinds[name][0]}
        script = scripts[name]
        out[name] = {
            "calls": script.measured_ops,
            "ns_per_op": statistics.median(runs[name]),
            "ns_per_op_runs": runs[name],
            "ns_per_call_by_op": by_kind,
            "op_counts": workload.op_counts(script.ops[script.warmup :]),
        }
    if BASELINE in out:
        base = out[BASELINE]
        for name in names:
            row = out[name]
            row["ns_per_op_ratio"] = rounds.median_ratio(
                row["ns_per_op_runs"], base["ns_per_op_runs"]
            )
            row["same_mix_ratio"] = rounds.same_mix_ratio(
                base["op_counts"], base["ns_per_call_by_op"], row["ns_per_call_by_op"]
            )
    return out


def policy_costs(
    streams: Iterable[Stream],
    pools: Sequence[int],
    policies: Sequence[str],
    *,
    cost_warmup: int,
    cost_requests: int,
    mix_sizes: Sequence[int],
    mix_ops: int,
    repeat: int,
    seed: int,
    factory_for: FactoryFor = cache_factory,
) -> list[dict[str, Any]]:
    """Per-op cost rows: each stream at each pool, and the realistic mix at each size.

    For the streams, requests ``[0, cost_warmup)`` warm the cache and the next
    ``cost_requests`` are timed (the same requests for every policy). The mix
    is recorded per policy with ``workload.record`` (it adapts to the cache's
    answers) and ``mix_ops`` measured calls.
    O(repeat x policies x (streams x pools x (cost_warmup + cost_requests)
    + mix sizes x mix calls)).
    """
    rows: list[dict[str, Any]] = []

    def add(name: str, blocks: int, scripts: dict[str, workload.Script], requests: int) -> None:
        timed = time_policies(scripts, repeat, factory_for)
        for policy in policies:
            rows.append(
                {"workload": name, "num_blocks": blocks, "policy": policy, "requests": requests}
                | timed[policy]
            )

    for stream in streams:
        for pool in pools:
            scripts = {
                policy: record_calls(stream, factory_for(policy)(pool), cost_warmup, cost_requests)
                for policy in policies
            }
            requests = min(cost_requests, len(stream.keys) - cost_warmup)
            add(stream.spec.workload, pool, scripts, requests)
    for size in mix_sizes:
        scripts = {
            policy: workload.record(size, mix_ops, seed, factory_for(policy)) for policy in policies
        }
        add(MIX_WORKLOAD, size, scripts, mix_ops)
    return rows
