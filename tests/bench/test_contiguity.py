"""``bench --contiguity``: runs are counted right, and the shared mix is compare.py's.

Small streams only; nothing is timed.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from bench_cli import SEED_CALLS

from embedding_cache import EVICTION_POLICIES, EmbeddingCache
from embedding_cache.entry import CacheEntry
from embedding_cache_bench import (
    contiguity,
    implementations,
    shared_mix,
    streams,
)
from embedding_cache_checker import upstream

#: compare.py's generator, when the shared tools sit beside the project (not shipped).
SHARED_TOOLS = Path(__file__).resolve().parents[3] / "shared" / "tools"


@pytest.mark.parametrize(
    ("ids", "expected"),
    [
        ((), 0),
        ((5,), 1),
        ((1, 2, 3), 1),
        ((1, 3, 5), 3),
        ((0, 1, 2, 7, 8, 10), 3),
        ((4, 5, 9, 10, 11, 12, 20), 3),
        (tuple(range(100, 4196)), 1),
    ],
)
def test_runs_of_hand_made_id_lists(ids: tuple[int, ...], expected: int) -> None:
    assert contiguity.runs(ids) == expected


def test_summary_counts_multi_block_entries_only() -> None:
    # (blocks, runs): single-block allocs are left out of the mean, as compare.py does.
    summary = contiguity.summarize([(1, 1), (4, 1), (6, 3), (1, 1), (9, 2)])
    assert summary == {
        "allocs": 5,
        "multi_block_allocs": 3,
        "runs_per_entry": 2.0,
        "one_run_fraction": pytest.approx(1 / 3),
        "max_runs": 3,
    }
    assert contiguity.summarize([(1, 1)])["runs_per_entry"] == 0.0


class _Scripted(EmbeddingCache):
    """Hands out planted block ids, so the counter's figures are known in advance."""

    planted = ((0, 1, 2, 3), (10, 12, 14), (7,), (20, 21, 30, 31))

    def alloc(
        self, key: str, n_blocks: int, shape: tuple[int, int] | None = None
    ) -> CacheEntry | None:
        ids = self.planted[len(self)]
        assert len(ids) == n_blocks
        super().alloc(key, n_blocks, shape)  # keeps the real cache's bookkeeping
        return CacheEntry(ids, shape)


def test_the_counter_sees_every_alloc_and_forwards_the_rest() -> None:
    counter = contiguity.RunCounter(_Scripted(64))
    for i, ids in enumerate(_Scripted.planted):
        assert counter.alloc(f"k{i}", len(ids)) is not None
    counter.mark_ready("k0")
    assert counter.pin_if_ready("k0") is not None
    assert counter.has_held_entries() and len(counter) == 4 and counter.num_blocks == 64
    assert counter.allocs == [(4, 1), (3, 3), (1, 1), (4, 2)]
    assert contiguity.summarize(counter.allocs)["runs_per_entry"] == 2.0


def test_the_shared_mix_is_deterministic_and_the_drop_in_gets_the_seeds_stream() -> None:
    seed_ops = shared_mix.record(implementations.SEED_FACTORY(4096), 8000)
    assert shared_mix.record(implementations.SEED_FACTORY(4096), 8000) == seed_ops
    assert len(seed_ops) >= 8000
    ours = shared_mix.record(EmbeddingCache(4096), 8000)
    assert shared_mix.fingerprint(ours) == shared_mix.fingerprint(seed_ops)
    names = {name for name, _ in seed_ops}
    assert names == SEED_CALLS
    assert shared_mix.fingerprint(seed_ops[:-1]) != shared_mix.fingerprint(seed_ops)


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"shared_{name}", SHARED_TOOLS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not (SHARED_TOOLS / "compare.py").exists(), reason="no shared tools here")
def test_the_shared_mix_is_compare_pys_call_for_call() -> None:
    """compare.py's own generator, driven by the seed (vLLM's installed class, handed to it
    as the module that defines it), records the same calls and runs."""
    tools = _load("workload")
    seed_module = upstream.load()
    theirs = tools.record(seed_module, num_blocks=4096, n_ops=12_000, seed=7)
    ours = shared_mix.record(implementations.SEED_FACTORY(4096), 12_000)
    assert [(name, tuple(args)) for name, args in theirs] == ours
    _, their_runs = tools.replay(seed_module, theirs, 4096)
    result = contiguity.shared(implementations.SEED_FACTORY, n_ops=12_000)
    assert result["runs_per_entry"] == pytest.approx(their_runs)


def test_token_streams_count_only_the_allocs_after_the_warm_up() -> None:
    spec = streams.StreamSpec("reuse", requests=600, warmup=200, seed=0, items=300)
    stream = streams.make_stream(spec)
    everything = streams.make_stream(streams.StreamSpec("reuse", 600, 0, 0, 300))
    counted = contiguity.token(implementations.SEED_FACTORY, stream, 16_384)
    whole = contiguity.token(implementations.SEED_FACTORY, everything, 16_384)
    assert 0 < counted["allocs"] < whole["allocs"]
    assert counted["calls"] == 400 and whole["calls"] == 600
    assert 0.0 < counted["request_hit_ratio"] < 1.0
    assert counted["runs_per_entry"] >= 1.0  # every item has >= 64 blocks


def test_measure_reports_every_implementation_on_every_workload() -> None:
    out = contiguity.measure(
        shared_ops=3000, token_pool=16_384, token_warmup=100, token_requests=300
    )
    impls = list(implementations.factories(contiguity=contiguity.CONTIGUITY_BOUNDS))
    assert impls[0] == implementations.SEED and set(EVICTION_POLICIES) < set(impls)
    assert {f"{p}/extents/k{k}" for p in EVICTION_POLICIES for k in (1, 2, 4, 8)} < set(impls)
    workloads = [contiguity.SHARED, *streams.WORKLOADS]
    assert [(row["workload"], row["impl"]) for row in out["rows"]] == [
        (name, impl) for name in workloads for impl in impls
    ]
    for row in out["rows"]:
        assert row["multi_block_allocs"] > 0
        assert 1.0 <= row["runs_per_entry"] <= row["max_runs"]
        if row["impl"] == implementations.SEED:
            assert row["vs_seed"] == 1.0
    shared = {row["impl"]: row for row in out["rows"] if row["workload"] == contiguity.SHARED}
    assert shared[implementations.SEED]["same_stream_as_seed"]
    # The baseline is the seed's drop-in, and the allocator picks ids, never whether an
    # alloc fits: the seed's stream with every allocator.
    for kind in implementations.allocator_names():
        assert shared[implementations.name(implementations.BASELINE, kind)]["same_stream_as_seed"]
    assert out["shared"]["num_blocks"] == 4096 and out["token"]["num_blocks"] == 16_384
    _check_contiguity_rows(out["rows"])


def _check_contiguity_rows(rows: list[dict[str, Any]]) -> None:
    """Contiguity rows carry their hits and evictions against the same policy on extents
    without it (k = 0); every other row carries neither."""
    token = {(r["workload"], r["impl"]): r for r in rows if r["workload"] != "shared"}
    for (name, impl), row in token.items():
        assert row["evicted_blocks"] > 0
        if "/k" not in impl:
            assert "hits_vs_k0" not in row
            continue
        base = token[(name, impl.rsplit("/k", 1)[0])]
        assert row["hits_vs_k0"] == row["request_hit_ratio"] / base["request_hit_ratio"]
        assert row["evicted_vs_k0"] == row["evicted_blocks"] / base["evicted_blocks"]
