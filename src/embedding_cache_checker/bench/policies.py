"""``embedding-cache bench --policies``: hit ratios and per-operation cost of each eviction policy.

Two token-sized request streams imitate vLLM's encoder cache (one block per
placeholder token):

- ``reuse``: Zipf(``ZIPF_EXPONENT``) popularity over ``CATALOGUE_ITEMS`` items;
  each item's size is drawn once, log-uniform in ``ITEM_BLOCKS`` blocks.
- ``scan``: the same, except that ``SCAN_FRACTION`` of the requests are one-time
  items (fresh keys, never requested again; sizes from the same distribution).

Each request is ``pin_if_ready(key)``: a hit when the entry is ready (it is then
unpinned at once, as the load completes); a miss allocates the item's blocks
and, if the alloc fit, marks the entry ready. Every policy replays the *same*
pre-generated stream (``Stream.fingerprint`` identifies it); the first
``warmup`` requests bring the cache to steady state and are not counted.

``hit_ratios`` simulates every (workload, pool size, policy), in worker
processes when ``jobs > 1``: the miss-ratio curve and the table's hit ratios
come from the same runs. ``policy_costs`` times the calls in one process,
after the simulations: per workload and pool, each policy's calls on a
prefix of the stream are recorded once (so the timed loop only calls the
cache), then replayed on a fresh cache ``repeat`` times, the policies
alternating (their order rotating each round), timing only the window after
the warm-up, in this thread's CPU time (``rounds.CLOCK``); medians are reported, and
ratios to ``BASELINE`` are medians of the per-round ratios. ns/op is per cache call.
The small-entry realistic mix of ``workload`` is timed the same way. Nothing
here asserts a speed.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import itertools
import math
import random
import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

from embedding_cache.cache import EmbeddingCache
from embedding_cache.policies import EVICTION_POLICIES, FifoPolicy

from . import rounds, runner, workload

#: Items in the catalogue of both token-sized workloads.
CATALOGUE_ITEMS = 20_000
#: Zipf exponent of item popularity (rank r is drawn with weight 1 / r**ZIPF_EXPONENT).
ZIPF_EXPONENT = 0.9
#: Smallest and largest item, in blocks (one block per placeholder token); log-uniform between.
ITEM_BLOCKS = (64, 4096)
#: Fraction of the ``scan`` workload's requests that are one-time items.
SCAN_FRACTION = 0.3
#: Workload name -> fraction of one-time requests.
WORKLOADS = {"reuse": 0.0, "scan": SCAN_FRACTION}
#: Name of the small-entry realistic mix (``workload.record``) in the cost table.
MIX_WORKLOAD = "mix"
#: Policy every ratio is taken against: the seed's own order (its drop-in), whatever
#: else the registry holds. The rows' ``*_vs_fifo`` keys keep that name.
BASELINE = FifoPolicy.name

#: Defaults of the command (see ``command.add_parser``).
DEFAULT_POOLS = (262_144, 65_536)
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


# -- policies ----------------------------------------------------------------------------


def policy_names() -> tuple[str, ...]:
    """Every name in ``embedding_cache.EVICTION_POLICIES``, in its order."""
    return tuple(EVICTION_POLICIES)


def cache_factory(name: str) -> Callable[[int], workload.Cache]:
    """A function ``num_blocks -> fresh EmbeddingCache`` evicting with policy ``name``.

    Raises:
        ValueError: ``name`` is not in ``EVICTION_POLICIES``.
    """
    if name not in EVICTION_POLICIES:
        raise ValueError(
            f"unknown eviction policy {name!r}; choose from {', '.join(EVICTION_POLICIES)}"
        )
    return functools.partial(EmbeddingCache, eviction=name)


#: Maps a policy name to its cache factory (tests plant their own).
FactoryFor = Callable[[str], Callable[[int], workload.Cache]]


# -- the request streams -----------------------------------------------------------------


@dataclass(frozen=True)
class StreamSpec:
    """Everything a request stream is generated from (picklable, for worker processes)."""

    workload: str
    requests: int  # total, warm-up included
    warmup: int
    seed: int
    items: int = CATALOGUE_ITEMS


@dataclass(frozen=True)
class Stream:
    """A pre-generated request stream: keys and their sizes in blocks."""

    spec: StreamSpec
    keys: tuple[str, ...]
    sizes: tuple[int, ...]
    fingerprint: str  # sha256 of the (key, size) sequence: equal streams, equal fingerprints

    @property
    def warmup(self) -> int:
        """Requests ``[0, warmup)`` are not counted."""
        return self.spec.warmup


def _item_size(rng: random.Random) -> int:
    low, high = ITEM_BLOCKS
    return min(high, max(low, round(math.exp(rng.uniform(math.log(low), math.log(high))))))


@functools.lru_cache(maxsize=2)
def _catalogue(seed: int, items: int) -> tuple[tuple[str, ...], tuple[int, ...], tuple[float, ...]]:
    """Item keys by popularity rank, their sizes, and the Zipf cumulative weights."""
    rng = random.Random(f"{seed}:catalogue")
    sizes = tuple(_item_size(rng) for _ in range(items))
    keys = tuple(f"item-{rank:06d}" for rank in range(items))
    weights = itertools.accumulate(1.0 / (rank + 1) ** ZIPF_EXPONENT for rank in range(items))
    return keys, sizes, tuple(weights)


@functools.lru_cache(maxsize=4)
def make_stream(spec: StreamSpec) -> Stream:
    """The request stream ``spec`` describes. Deterministic; O(requests x log items).

    Item sizes come from their own generator (``seed``, ``"catalogue"``), so both
    workloads share the catalogue; each workload draws its requests from
    (``seed``, its name). A stream with fewer requests is a prefix of one with more.

    Raises:
        ValueError: unknown workload, or a count out of range.
    """
    if spec.workload not in WORKLOADS:
        raise ValueError(f"unknown workload {spec.workload!r}; choose from {', '.join(WORKLOADS)}")
    if spec.items < 1 or spec.requests < 1 or not 0 <= spec.warmup < spec.requests:
        raise ValueError(f"need items >= 1 and 0 <= warmup < requests, got {spec}")
    item_keys, item_sizes, cum_weights = _catalogue(spec.seed, spec.items)
    total = cum_weights[-1]
    rng = random.Random(f"{spec.seed}:{spec.workload}")
    one_time = WORKLOADS[spec.workload]
    keys: list[str] = []
    sizes: list[int] = []
    fresh = 0
    for _ in range(spec.requests):
        if one_time and rng.random() < one_time:
            keys.append(f"once-{fresh:07d}")
            sizes.append(_item_size(rng))
            fresh += 1
        else:
            rank = bisect.bisect_right(cum_weights, rng.random() * total)
            rank = min(rank, spec.items - 1)
            keys.append(item_keys[rank])
            sizes.append(item_sizes[rank])
    digest = hashlib.sha256()
    for key, size in zip(keys, sizes, strict=True):
        digest.update(f"{key}:{size}\n".encode())
    return Stream(spec, tuple(keys), tuple(sizes), digest.hexdigest()[:16])


# -- hit ratios --------------------------------------------------------------------------


@dataclass(frozen=True)
class HitCounts:
    """What one policy answered to the counted part of one stream on one pool."""

    requests: int
    hits: int
    blocks_requested: int
    blocks_hit: int  # blocks of the hit entries
    allocs: int
    alloc_failures: int
    evictions: int
    cpu_seconds: float = field(default=0.0, compare=False)  # the whole run, warm-up included

    @property
    def request_hit_ratio(self) -> float:
        """Hits over requests."""
        return self.hits / self.requests if self.requests else 0.0

    @property
    def block_hit_ratio(self) -> float:
        """Blocks of the hit entries over blocks requested."""
        return self.blocks_hit / self.blocks_requested if self.blocks_requested else 0.0


def simulate(stream: Stream, cache: workload.Cache) -> HitCounts:
    """Serve every request of ``stream`` on ``cache``; the counts after the warm-up.

    An item larger than the whole pool is not allocated (``alloc`` would raise):
    it counts as an alloc failure, as does an alloc that returns None.
    """
    pin_if_ready, unpin, alloc, mark_ready = (
        cache.pin_if_ready,
        cache.unpin,
        cache.alloc,
        cache.mark_ready,
    )
    started = time.process_time()
    hits = blocks_hit = allocs = failures = evictions = 0
    warmup = stream.warmup
    pool = cache_blocks(cache)
    for i, (key, size) in enumerate(zip(stream.keys, stream.sizes, strict=True)):
        if i == warmup:
            hits = blocks_hit = allocs = failures = evictions = 0
        entry = pin_if_ready(key)
        if entry is not None:
            if entry.ready:  # always, in this workload: saves complete at once
                hits += 1
                blocks_hit += size
                unpin(key)
            continue
        allocs += 1
        if size > pool:  # larger than the pool: alloc would raise CapacityError
            failures += 1
            continue
        before = len(cache)
        if alloc(key, size) is None:
            failures += 1
            continue
        evictions += before + 1 - len(cache)
        mark_ready(key)
    counted = stream.sizes[warmup:]
    cpu = time.process_time() - started
    return HitCounts(len(counted), hits, sum(counted), blocks_hit, allocs, failures, evictions, cpu)


def _simulate_job(job: tuple[StreamSpec, int, str]) -> HitCounts:
    """One (stream, pool, policy) simulation; runs in a worker process."""
    spec, pool, policy = job
    return simulate(make_stream(spec), cache_factory(policy)(pool))


def hit_ratios(
    specs: Sequence[StreamSpec],
    pools: Sequence[int],
    policies: Sequence[str],
    *,
    jobs: int = 1,
    factory_for: FactoryFor = cache_factory,
) -> dict[tuple[str, int, str], HitCounts]:
    """Counts for every (workload, pool, policy); in ``jobs`` worker processes if > 1.

    Worker processes build caches with ``cache_factory``, so a planted
    ``factory_for`` runs in this process.
    """
    grid = [(spec, pool, policy) for spec in specs for pool in pools for policy in policies]
    if jobs > 1 and factory_for is cache_factory and len(grid) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as executor:
            counts = list(executor.map(_simulate_job, grid, chunksize=1))
    else:
        counts = [
            simulate(make_stream(spec), factory_for(policy)(pool)) for spec, pool, policy in grid
        ]
    return {
        (spec.workload, pool, policy): count
        for (spec, pool, policy), count in zip(grid, counts, strict=True)
    }


# -- per-operation cost ------------------------------------------------------------------


def record_calls(
    stream: Stream, cache: workload.Cache, warmup: int, window: int
) -> workload.Script:
    """Serve requests ``[0, warmup + window)`` of ``stream``, recording every call.

    The script's measured part starts at request ``warmup``. Alloc outcomes keep
    the eviction count but not the block ids (they would take gigabytes here), so
    ``Script.stats`` works but ``workload.replay`` does not reproduce them.
    """
    ops: list[workload.Op] = []
    outcomes: list[workload.Outcome] = []
    pool = cache_blocks(cache)
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


def cache_blocks(cache: workload.Cache) -> int:
    """The pool size of ``cache`` (``num_blocks``)."""
    blocks: int = getattr(cache, "num_blocks")  # noqa: B009 - not part of the Protocol
    return blocks


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


# -- the whole bench ---------------------------------------------------------------------


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
    starts. ``progress`` gets one line per phase, with its duration.
    """
    names = list(policy_names() if policies is None else policies)
    specs = [StreamSpec(name, warmup + requests, warmup, seed) for name in WORKLOADS]
    all_pools = sorted(set(pools) | set(curve_pools))
    started = time.perf_counter()
    counts = hit_ratios(specs, all_pools, names, jobs=jobs, factory_for=factory_for)
    sim_seconds = time.perf_counter() - started
    sim_cpu = sum(count.cpu_seconds for count in counts.values())
    if progress is not None:
        progress(
            f"hit ratios: {len(counts)} simulations of {warmup + requests:,} requests "
            f"in {sim_seconds:.0f} s ({jobs} job(s), {sim_cpu:.0f} s of CPU)"
        )
    cpu_started = time.process_time()
    streams = [make_stream(spec) for spec in specs]
    hit_rows = []
    for stream in streams:
        for pool in all_pools:
            base = counts.get((stream.spec.workload, pool, BASELINE))
            for policy in names:
                count = counts[(stream.spec.workload, pool, policy)]
                row: dict[str, Any] = {
                    "workload": stream.spec.workload,
                    "num_blocks": pool,
                    "policy": policy,
                    "stream": stream.fingerprint,
                    **asdict(count),
                    "request_hit_ratio": count.request_hit_ratio,
                    "block_hit_ratio": count.block_hit_ratio,
                    "miss_ratio": 1.0 - count.request_hit_ratio,
                }
                if base is not None:
                    row["request_hit_vs_fifo"] = _ratio(
                        count.request_hit_ratio, base.request_hit_ratio
                    )
                    row["block_hit_vs_fifo"] = _ratio(count.block_hit_ratio, base.block_hit_ratio)
                hit_rows.append(row)
    cost_rows = policy_costs(
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
    cost_seconds = time.perf_counter() - started - sim_seconds
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
            "cost": cost_seconds,
            "cost_cpu": cost_cpu,
        },
        "hit_ratios": hit_rows,
        "costs": cost_rows,
        "targets": targets(hit_rows, cost_rows, pools),
    }


def _ratio(mine: float, base: float) -> float | None:
    return mine / base if base else None


def targets(
    hit_rows: Sequence[Mapping[str, Any]],
    cost_rows: Sequence[Mapping[str, Any]],
    pools: Sequence[int],
) -> list[dict[str, Any]]:
    """The project's targets against the measurements: one row per check, with its margin.

    Hit gain: per workload and table pool, the best non-baseline policy's request
    hit ratio over the baseline's, against ``TARGET_HIT_GAIN``. Cost: per
    non-baseline policy, its largest ns/op and same-mix ratio over every cost row,
    against ``TARGET_MAX_COST_RATIO``. ``margin`` is how far inside the target the
    value is, in the ratio's units (negative: missed by that much).
    """
    checks: list[dict[str, Any]] = []
    for name, target in TARGET_HIT_GAIN.items():
        for pool in pools:
            rows = [
                row
                for row in hit_rows
                if row["workload"] == name
                and row["num_blocks"] == pool
                and row["policy"] != BASELINE
                and row.get("request_hit_vs_fifo") is not None
            ]
            if not rows:
                continue
            best = max(rows, key=lambda row: row["request_hit_vs_fifo"])
            value = best["request_hit_vs_fifo"]
            checks.append(
                {
                    "check": f"request hit ratio vs {BASELINE}, {name}, {pool:,} blocks",
                    "policy": best["policy"],
                    "value": value,
                    "target": f">= {target:.2f}x",
                    "met": value >= target,
                    "margin": value - target,
                }
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
