"""``embedding-cache bench --policies``: hit ratios and per-operation cost of each eviction policy.

Every configuration (``implementations.configuration_names``: each policy of
``embedding_cache.EVICTION_POLICIES``, alone and with each admission filter of
``ADMISSION_FILTERS``, as "gdsf+doorkeeper") serves the token-sized
request streams (``streams``) on every pool of the table and of the miss-ratio
curve (``hit_ratios``, possibly in worker processes), beside the offline
reference, which knows the future (``offline``); then, alone, the policies
are timed side by side on those streams and on the realistic mix
(``policy_costs``). ``measure`` runs both and returns one JSON-ready dict;
``targets`` sets it against the project's goals. Ratios are to the baseline,
``implementations.BASELINE`` (the seed's order). Nothing here asserts a speed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from . import bounds, hit_ratios, offline, policy_costs
from .implementations import BASELINE, FactoryFor, cache_factory, configuration_names
from .streams import ITEM_BLOCKS, WORKLOADS, ZIPF_EXPONENT, StreamSpec, make_stream

#: Defaults of the command (see ``command.add_parser``): 4 GiB and 1 GiB in rows of
#: 8 KiB (hidden 4,096 in bf16), the pools of ``bench --vllm``.
DEFAULT_POOLS = (524_288, 131_072)
DEFAULT_REQUESTS = 120_000
DEFAULT_WARMUP = 40_000
DEFAULT_COST_REQUESTS = 20_000
DEFAULT_COST_WARMUP = 5_000
DEFAULT_REPEAT = 3
#: Miss-ratio curve pools: 9 sizes log-spaced from 2**14 to 2**20 blocks (x 2**0.75 each).
DEFAULT_CURVE_POOLS = tuple(round(2 ** (14 + 0.75 * k)) for k in range(9))

#: The project's targets (reported, never asserted): the best policy's request hit
#: ratio over the baseline's, per workload, at every table pool; every policy's cost
#: over the baseline's.
TARGET_HIT_GAIN = {"reuse": 1.35, "scan": 1.45}
TARGET_MAX_COST_RATIO = 1.5
#: The best policy's request hit ratio over the offline reference's (``offline``), per
#: workload, at every table pool.
TARGET_REFERENCE_FRACTION = 0.80
#: The best configuration's hits over the lower bound on the optimum's
#: (``optimum.foo_bounds``), per workload, at every table pool.
TARGET_OPT_LOWER_FRACTION = 0.90


def measure(
    *,
    pools: Sequence[int],
    curve_pools: Sequence[int],
    requests: int,
    warmup: int,
    cost_requests: int,
    cost_warmup: int,
    mix_sizes: Sequence[int],
    mix_ops: int,
    repeat: int,
    seed: int,
    jobs: int = 1,
    policies: Sequence[str] | None = None,
    factory_for: FactoryFor = cache_factory,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Hit ratios on every pool (table and curve), then per-op costs; a JSON-ready dict.

    The simulations (possibly in worker processes) finish before any timing
    starts. ``progress`` gets one line per phase, with its duration. The cost is
    ``hit_ratios.hit_ratios``' plus ``policy_costs.policy_costs``'.
    """
    names = list(configuration_names() if policies is None else policies)
    specs = [StreamSpec(name, warmup + requests, warmup, seed) for name in WORKLOADS]
    all_pools = sorted(set(pools) | set(curve_pools))
    started = time.perf_counter()
    counts = hit_ratios.hit_ratios(
        specs,
        all_pools,
        names,
        offline_rules=tuple(offline.OFFLINE_RULES),
        jobs=jobs,
        factory_for=factory_for,
    )
    sim_seconds = time.perf_counter() - started
    sim_cpu = sum(count.cpu_seconds for count in counts.values())
    if progress is not None:
        progress(
            f"hit ratios: {len(counts)} simulations of {warmup + requests:,} requests "
            f"in {sim_seconds:.0f} s ({jobs} job(s), {sim_cpu:.0f} s of CPU)"
        )
    cpu_started = time.process_time()
    streams = [make_stream(spec) for spec in specs]
    reference_rows = hit_ratios.reference_rows(counts, streams, all_pools)
    started_bounds = time.perf_counter()
    bound_rows = bounds.bound_rows(streams, pools)
    bound_seconds = time.perf_counter() - started_bounds
    if progress is not None:
        progress(f"bounds on the optimum: {len(bound_rows)} programs in {bound_seconds:.0f} s")
    hit_rows = bounds.with_fractions(
        hit_ratios.hit_rows(counts, streams, all_pools, names, BASELINE), bound_rows
    )
    cost_rows = policy_costs.policy_costs(
        streams,
        pools,
        names,
        cost_warmup=min(cost_warmup, warmup + requests - 1),
        cost_requests=cost_requests,
        mix_sizes=mix_sizes,
        mix_ops=mix_ops,
        repeat=repeat,
        seed=seed,
        factory_for=factory_for,
    )
    cost_seconds = time.perf_counter() - started - sim_seconds - bound_seconds
    cost_cpu = time.process_time() - cpu_started
    if progress is not None:
        progress(
            f"per-op cost: {len(cost_rows)} timed rows in {cost_seconds:.0f} s "
            f"({cost_cpu:.0f} s of CPU)"
        )
    return {
        "names": names,
        "baseline": BASELINE,
        "workloads": {
            stream.spec.workload: {
                "items": stream.spec.items,
                "zipf_exponent": ZIPF_EXPONENT,
                "item_blocks": list(ITEM_BLOCKS),
                "one_time_fraction": WORKLOADS[stream.spec.workload],
                "requests": requests,
                "warmup": warmup,
                "stream": stream.fingerprint,
            }
            for stream in streams
        },
        "pools": list(pools),
        "curve_pools": all_pools,
        "seed": seed,
        "repeat": repeat,
        "cost": {
            "warmup": cost_warmup,
            "requests": cost_requests,
            "mix_sizes": list(mix_sizes),
            "mix_ops": mix_ops,
        },
        "seconds": {
            "hit_ratios": sim_seconds,
            "hit_ratios_cpu": sim_cpu,
            "bounds": bound_seconds,
            "cost": cost_seconds,
            "cost_cpu": cost_cpu,
        },
        "hit_ratios": hit_rows,
        "reference": reference_rows,
        "bounds": bound_rows,
        "costs": cost_rows,
        "targets": targets(hit_rows, cost_rows, pools),
    }


def targets(
    hit_rows: Sequence[Mapping[str, Any]],
    cost_rows: Sequence[Mapping[str, Any]],
    pools: Sequence[int],
) -> list[dict[str, Any]]:
    """The project's targets against the measurements: one row per check, with its margin.

    Hit gain: per workload and table pool, the best non-baseline policy's request
    hit ratio over the baseline's, against ``TARGET_HIT_GAIN``; and the best
    policy's over the offline reference's, against ``TARGET_REFERENCE_FRACTION``. Cost: per
    non-baseline policy, its largest ns/op and same-mix ratio over every cost row,
    against ``TARGET_MAX_COST_RATIO``. ``margin`` is how far inside the target the
    value is, in the ratio's units (negative: missed by that much).
    O(workloads x pools x hit rows + cost rows).
    """
    checks: list[dict[str, Any]] = []
    for name, target in TARGET_HIT_GAIN.items():
        against = [row for row in hit_rows if row["policy"] != BASELINE]
        checks += _best_per_pool(against, name, pools, "request_hit_vs_fifo", BASELINE, target)
    for name in TARGET_HIT_GAIN:
        checks += _best_per_pool(
            hit_rows,
            name,
            pools,
            "request_hit_vs_reference",
            "the offline reference",
            TARGET_REFERENCE_FRACTION,
        )
    for name in TARGET_HIT_GAIN:
        checks += _best_per_pool(
            hit_rows,
            name,
            pools,
            "hits_vs_opt_lower",
            "the lower bound on the optimum",
            TARGET_OPT_LOWER_FRACTION,
        )
    for policy in sorted({row["policy"] for row in cost_rows} - {BASELINE}):
        mine = [row for row in cost_rows if row["policy"] == policy and "ns_per_op_ratio" in row]
        if not mine:
            continue
        for key, label in (("ns_per_op_ratio", "ns/op"), ("same_mix_ratio", "same-mix cost")):
            worst = max(mine, key=lambda row: row[key])
            value = worst[key]
            checks.append(
                {
                    "check": (
                        f"{label} vs {BASELINE}, worst row ({worst['workload']}, "
                        f"{worst['num_blocks']:,} blocks)"
                    ),
                    "policy": policy,
                    "value": value,
                    "target": f"<= {TARGET_MAX_COST_RATIO:.2f}x",
                    "met": value <= TARGET_MAX_COST_RATIO,
                    "margin": TARGET_MAX_COST_RATIO - value,
                }
            )
    return checks


def _best_per_pool(
    hit_rows: Sequence[Mapping[str, Any]],
    workload: str,
    pools: Sequence[int],
    key: str,
    versus: str,
    target: float,
) -> list[dict[str, Any]]:
    """One check per pool: the row of ``workload`` with the highest ``key``, against
    ``target`` (at least). O(pools x hit rows)."""
    checks = []
    for pool in pools:
        rows = [
            row
            for row in hit_rows
            if row["workload"] == workload
            and row["num_blocks"] == pool
            and row.get(key) is not None
        ]
        if not rows:
            continue
        best = max(rows, key=lambda row: float(row[key]))
        value = best[key]
        checks.append(
            {
                "check": f"request hit ratio vs {versus}, {workload}, {pool:,} blocks",
                "policy": best["policy"],
                "value": value,
                "target": f">= {target:.2f}x",
                "met": value >= target,
                "margin": value - target,
            }
        )
    return checks
