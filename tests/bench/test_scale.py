"""``bench --scale``: per-op cost at several pool sizes, as ratios to the smallest.

Tiny pools and op counts; no timing is asserted, only the shape of the rows
and the ratios' arithmetic.
"""

from __future__ import annotations

import pytest

from embedding_cache import EVICTION_POLICIES
from embedding_cache.entry import CacheEntry
from embedding_cache_bench import implementations, report, scale, workload


def test_rows_per_implementation_and_size_with_ratios_to_the_smallest() -> None:
    out = scale.measure(sizes=(512, 256), n_ops=300, repeat=2, seed=1)
    impls = list(implementations.factories())
    assert out["sizes"] == [256, 512]
    assert [(row["impl"], row["num_blocks"]) for row in out["rows"]] == [
        (impl, size) for impl in impls for size in (256, 512)
    ]
    for row in out["rows"]:
        assert row["ops"] == 300
        assert len(row["ns_per_op_runs"]) == 2
        assert row["ns_per_op"] > 0 and row["vs_smallest"] > 0 and row["vs_seed"] > 0
        assert sum(row["op_counts"].values()) == 300
        assert set(row["by_op_vs_smallest"]) <= set(row["ns_per_call_by_op"])
        assert 0.0 < row["hit_ratio"] < 1.0
        assert row["evictions"] > 0  # the catalogue exceeds the pool at every size
        if row["num_blocks"] == 256:  # each round's ratio of the smallest to itself
            assert row["vs_smallest"] == 1.0
            assert row["same_mix_vs_smallest"] == pytest.approx(1.0)
        if row["impl"] == implementations.SEED:
            assert row["vs_seed"] == 1.0 and row["growth_over_seeds"] == 1.0
    small, large = out["rows"][0], out["rows"][1]
    assert large["catalogue"] > small["catalogue"]  # the mix scales with the pool
    assert large["item_sizes"] == small["item_sizes"]  # ... not the work per call


def test_windows_follow_the_warm_up_and_each_other() -> None:
    """Window k of a script is timed on a cache warmed by exactly the calls before it."""
    script = workload.record(256, 3 * 200, seed=2)
    calls: list[tuple[str]] = []

    def spy(num_blocks: int) -> workload.Cache:
        """The seed's cache, its ``get`` shadowed on the instance by one that logs the key."""
        cache = implementations.seed_cache(num_blocks)
        seeds_get = cache.get

        def get(key: str) -> CacheEntry | None:
            calls.append((key,))
            return seeds_get(key)

        vars(cache)["get"] = get
        return cache

    runs, kinds = scale.time_windows([script], spy, 200, 2)
    assert len(runs[0]) == 2 and set(kinds[0]) <= {*report.OPERATIONS, "has_held_entries"}
    gets = [args for op, args in script.ops if op == "get"]
    assert calls == gets  # every get of warm-up + 3 windows, once, in order


def test_one_policy_one_allocator_and_one_size() -> None:
    policy, kind = list(EVICTION_POLICIES)[-1], implementations.allocator_names()[-1]
    out = scale.measure([policy], allocators=[kind], sizes=(64,), n_ops=100, repeat=1)
    assert [(row["impl"], row["vs_smallest"]) for row in out["rows"]] == [
        (implementations.SEED, 1.0),
        (implementations.name(policy, kind), 1.0),
    ]


def test_bad_counts_are_rejected() -> None:
    with pytest.raises(ValueError, match="repeat"):
        scale.measure(sizes=(64,), n_ops=10, repeat=0)
    with pytest.raises(ValueError, match="unknown eviction policy"):
        scale.measure(["lru"], sizes=(64,), n_ops=10, repeat=1)
    with pytest.raises(ValueError, match="unknown allocator"):
        scale.measure(allocators=["buddy"], sizes=(64,), n_ops=10, repeat=1)
