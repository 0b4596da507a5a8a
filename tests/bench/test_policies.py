"""``bench --policies``: the streams, the simulation, the report's shape, the plot and its fallback.

Tiny pools and request counts only; no timing is asserted anywhere.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from bench_cli import main

from embedding_cache import ADMISSION_FILTERS, EVICTION_POLICIES, EmbeddingCache
from embedding_cache.entry import CacheEntry
from embedding_cache_bench import (
    hit_ratios,
    implementations,
    plot,
    policies,
    policy_costs,
    report,
    streams,
    workload,
)

#: A run small enough for a test: ~2,000 requests a simulation, 3 pools, tiny mix.
SMALL: dict[str, Any] = {
    "pools": [8192, 4096],
    "curve_pools": [16384],
    "requests": 400,
    "warmup": 100,
    "cost_requests": 100,
    "cost_warmup": 50,
    "mix_sizes": [64],
    "mix_ops": 200,
    "repeat": 1,
    "seed": 0,
}
#: The same, as command-line options.
SMALL_ARGV = [
    "--pools=8192,4096",
    "--curve-pools=16384",
    "--requests=400",
    "--warmup=100",
    "--cost-requests=100",
    "--cost-warmup=50",
    "--sizes=64",
    "--ops=200",
    "--repeat=1",
    "--seed=0",
    "--jobs=1",
]


def _spec(name: str, requests: int = 3000, warmup: int = 1000, seed: int = 0) -> streams.StreamSpec:
    return streams.StreamSpec(name, requests, warmup, seed)


def test_every_registered_policy_is_benched() -> None:
    assert implementations.policy_names() == tuple(EVICTION_POLICIES)
    assert implementations.configuration_names() == (
        *EVICTION_POLICIES,
        *(f"{p}+{d}" for d in ADMISSION_FILTERS for p in EVICTION_POLICIES),
    )
    door = implementations.cache_factory("gdsf+doorkeeper")(64)
    assert isinstance(door, EmbeddingCache)
    assert (door.eviction, door.admission) == ("gdsf", "doorkeeper")
    with pytest.raises(ValueError, match="unknown admission filter 'nobody'"):
        implementations.cache_factory("fifo+nobody")
    assert implementations.BASELINE in EVICTION_POLICIES
    for name in EVICTION_POLICIES:
        cache = implementations.cache_factory(name)(64)
        assert isinstance(cache, EmbeddingCache)
        assert cache.num_blocks == 64
    with pytest.raises(ValueError, match="unknown eviction policy"):
        implementations.cache_factory("no-such-policy")


def test_streams_are_deterministic_and_shaped() -> None:
    reuse = streams.make_stream(_spec("reuse"))
    assert streams.make_stream(_spec("reuse")) == reuse
    assert streams.make_stream(_spec("reuse", seed=1)).fingerprint != reuse.fingerprint
    assert len(reuse.keys) == len(reuse.sizes) == 3000
    low, high = streams.ITEM_BLOCKS
    assert all(low <= size <= high for size in reuse.sizes)
    assert len(set(reuse.keys)) < len(reuse.keys)  # Zipf: popular items come back
    size_of: dict[str, int] = {}
    for key, size in zip(reuse.keys, reuse.sizes, strict=True):
        assert size_of.setdefault(key, size) == size  # an item's size is drawn once
    shorter = streams.make_stream(_spec("reuse", requests=1200, warmup=100))
    assert reuse.keys[:1200] == shorter.keys

    scan = streams.make_stream(_spec("scan"))
    once = [key for key in scan.keys if key.startswith("once-")]
    assert len(once) == len(set(once))  # one-time items are never requested again
    assert 0.25 < len(once) / len(scan.keys) < 0.35
    regular = {key: size for key, size in zip(scan.keys, scan.sizes, strict=True)}
    assert all(regular[key] == size_of[key] for key in size_of if key in regular)
    with pytest.raises(ValueError):
        streams.make_stream(_spec("nope"))
    with pytest.raises(ValueError):
        streams.make_stream(_spec("reuse", requests=10, warmup=10))


@pytest.mark.parametrize("name", list(EVICTION_POLICIES))
def test_a_pool_that_holds_everything_hits_every_repeat(name: str) -> None:
    """Nothing is ever evicted, so the hits are exactly the counted repeats, for any policy."""
    stream = streams.make_stream(_spec("scan", requests=800, warmup=300))
    pool = sum(stream.sizes)
    counts = hit_ratios.simulate(stream, implementations.cache_factory(name)(pool))
    seen = set(stream.keys[: stream.warmup])
    repeats = 0
    for key in stream.keys[stream.warmup :]:
        repeats += key in seen
        seen.add(key)
    assert counts.requests == 500
    assert counts.hits == repeats
    assert counts.evictions == counts.alloc_failures == 0
    assert counts.allocs == counts.requests - counts.hits
    assert counts.blocks_requested == sum(stream.sizes[stream.warmup :])
    assert 0.0 < counts.block_hit_ratio < 1.0


def test_items_larger_than_the_pool_count_as_alloc_failures() -> None:
    stream = streams.make_stream(_spec("reuse", requests=400, warmup=100))
    counts = hit_ratios.simulate(stream, EmbeddingCache(1000))
    too_big = sum(size > 1000 for size in stream.sizes[100:])
    assert too_big > 0 and counts.alloc_failures >= too_big


class _Spy(EmbeddingCache):
    """Records every key asked for with ``pin_if_ready``."""

    asked: ClassVar[dict[str, list[str]]] = {}

    def __init__(self, num_blocks: int, name: str) -> None:
        super().__init__(num_blocks, eviction=name)
        self._log = self.asked.setdefault(f"{name}/{num_blocks}", [])

    def pin_if_ready(self, key: str) -> CacheEntry | None:
        self._log.append(key)
        return super().pin_if_ready(key)


def test_every_policy_serves_the_same_stream() -> None:
    _Spy.asked = {}

    def spy_for(name: str) -> Callable[[int], workload.Cache]:
        return lambda num_blocks: _Spy(num_blocks, name)

    counts = hit_ratios.hit_ratios(
        [_spec("reuse", 600, 200)], [4096], list(EVICTION_POLICIES), factory_for=spy_for
    )
    logs = list(_Spy.asked.values())
    assert len(logs) == len(EVICTION_POLICIES)
    assert all(log == logs[0] for log in logs)
    assert logs[0] == list(streams.make_stream(_spec("reuse", 600, 200)).keys)
    assert {policy for _, _, policy in counts} == set(EVICTION_POLICIES)


def test_worker_processes_give_the_same_counts() -> None:
    specs = [_spec("reuse", 500, 100), _spec("scan", 500, 100)]
    names = list(EVICTION_POLICIES)
    assert hit_ratios.hit_ratios(specs, [4096, 8192], names, jobs=2) == hit_ratios.hit_ratios(
        specs, [4096, 8192], names, jobs=1
    )


def test_recorded_calls_match_the_simulation() -> None:
    stream = streams.make_stream(_spec("scan", 900, 300))
    for name in EVICTION_POLICIES:
        script = policy_costs.record_calls(
            stream, implementations.cache_factory(name)(8192), 300, 600
        )
        stats = script.stats()
        counts = hit_ratios.simulate(stream, implementations.cache_factory(name)(8192))
        assert (stats.lookups, stats.hits) == (counts.requests, counts.hits)
        assert (stats.allocs, stats.evictions) == (counts.allocs, counts.evictions)
        assert script.ops[script.warmup][0] == "pin_if_ready"


@pytest.fixture(scope="module")
def small_run() -> dict[str, Any]:
    """One small ``policies.measure`` run, shared by the tests that only read it."""
    return policies.measure(**SMALL)


def _check_section(section: dict[str, Any]) -> None:
    assert section["names"] == list(implementations.configuration_names())
    _check_hit_rows(section)
    _check_cost_rows(section)
    checks = {check["check"].split(",")[1].strip() for check in section["targets"][:4]}
    assert checks == {"reuse", "scan"}
    assert all(isinstance(check["met"], bool) for check in section["targets"])


def _check_hit_rows(section: dict[str, Any]) -> None:
    names = list(implementations.configuration_names())
    pools = sorted({*section["pools"], 16384})
    assert section["curve_pools"] == pools
    hit_rows = section["hit_ratios"]
    assert [(row["workload"], row["num_blocks"], row["policy"]) for row in hit_rows] == [
        (name, pool, policy) for name in streams.WORKLOADS for pool in pools for policy in names
    ]
    base = {
        (row["workload"], row["num_blocks"]): row
        for row in hit_rows
        if row["policy"] == implementations.BASELINE
    }
    for row in hit_rows:
        assert 0.0 <= row["request_hit_ratio"] <= 1.0
        assert 0.0 <= row["block_hit_ratio"] <= 1.0
        assert row["miss_ratio"] == pytest.approx(1.0 - row["request_hit_ratio"])
        assert row["request_hit_ratio"] == row["hits"] / row["requests"]
        assert row["requests"] == SMALL["requests"]
        # Ratios to the baseline come from the same stream.
        baseline = base[(row["workload"], row["num_blocks"])]
        stream = section["workloads"][row["workload"]]["stream"]
        assert row["stream"] == baseline["stream"] == stream
        assert row["blocks_requested"] == baseline["blocks_requested"]
        assert row["request_hit_vs_fifo"] == pytest.approx(
            row["request_hit_ratio"] / baseline["request_hit_ratio"]
        )
    assert section["workloads"]["reuse"]["stream"] != section["workloads"]["scan"]["stream"]
    _check_bounds(section)


def _check_bounds(section: dict[str, Any]) -> None:
    """Each table pool has its bounds, no configuration beats the upper one, and the
    table rows carry their fractions of both (the curve's pools are not bounded)."""
    found = {(row["workload"], row["num_blocks"]): row for row in section["bounds"]}
    assert sorted(found) == sorted((w, p) for w in streams.WORKLOADS for p in section["pools"])
    for row in section["hit_ratios"]:
        bound = found.get((row["workload"], row["num_blocks"]))
        if bound is None:
            assert "hits_vs_opt_lower" not in row
            continue
        assert bound["foo_lower"] <= bound["foo_upper"] <= bound["resource_upper"]
        assert row["hits"] <= bound["foo_upper"] + 1e-6
        assert row["hits_vs_opt_lower"] == pytest.approx(row["hits"] / bound["foo_lower"])


def _check_cost_rows(section: dict[str, Any]) -> None:
    names = list(implementations.configuration_names())
    cost_rows = section["costs"]
    expected = [(name, pool) for name in streams.WORKLOADS for pool in section["pools"]]
    expected += [(policy_costs.MIX_WORKLOAD, 64)]
    assert [(row["workload"], row["num_blocks"], row["policy"]) for row in cost_rows] == [
        (name, pool, policy) for name, pool in expected for policy in names
    ]
    for row in cost_rows:
        assert row["ns_per_op"] > 0
        assert sum(row["op_counts"].values()) == row["calls"]
        if row["policy"] == implementations.BASELINE:
            assert row["ns_per_op_ratio"] == row["same_mix_ratio"] == 1.0
        else:
            assert row["ns_per_op_ratio"] > 0 and row["same_mix_ratio"] > 0


def test_measure_reports_every_policy_workload_and_pool(small_run: dict[str, Any]) -> None:
    _check_section(small_run)


def test_cli_policies_json_writes_the_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    argv = ["bench", "--policies", *SMALL_ARGV, "--plot-dir", str(tmp_path / "out"), "--json"]
    code = main(argv)
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert tuple(out) == report.POLICY_REPORT_KEYS
    assert out["command"] == "embedding-cache bench --policies"
    _check_section(out["policies"])
    files = [Path(name) for name in out["plot"]["files"]]
    assert [file.name for file in files] == ["miss_ratio_curve.png", "miss_ratio_curve.svg"]
    assert all(file.parent == tmp_path / "out" and file.stat().st_size > 1000 for file in files)
    assert files[0].read_bytes().startswith(b"\x89PNG")
    assert out["plot"]["skipped"] is None


def test_without_matplotlib_the_table_still_prints(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    small_run: dict[str, Any],
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    asked: list[dict[str, Any]] = []

    def measured(**options: Any) -> dict[str, Any]:
        asked.append(options)
        return small_run  # the same options: no need to measure again

    monkeypatch.setattr(policies, "measure", measured)
    code = main(["bench", "--policies", *SMALL_ARGV, "--plot-dir", str(tmp_path / "out")])
    assert [{key: options[key] for key in SMALL} for options in asked] == [SMALL]
    assert code == 0
    captured = capsys.readouterr()
    hint = [line for line in captured.err.splitlines() if "pip install" in line]
    assert hint == [f"embedding-cache bench: {plot.INSTALL_HINT}"]
    assert "pip install 'embedding-cache[plot]'" in hint[0]
    text = captured.out
    assert "request hit" in text and "block hit" in text and "same mix" in text
    table_rows = [line.split() for line in text.splitlines() if line.startswith("scan ")]
    for name in EVICTION_POLICIES:
        assert ["scan", "4,096", name] in [row[:3] for row in table_rows]
    assert "miss ratio (1 - request hit ratio) by pool size:" in text
    assert f"target: request hit ratio vs {implementations.BASELINE}, scan, 8,192 blocks" in text
    assert f"miss-ratio curve: {plot.INSTALL_HINT}" in text
    assert not (tmp_path / "out").exists()


def test_curves_group_the_rows_by_workload_and_policy() -> None:
    # Policy names are data to ``curves``: made-up ones.
    rows = [
        {"workload": "reuse", "policy": "x", "num_blocks": 20, "miss_ratio": 0.5},
        {"workload": "reuse", "policy": "x", "num_blocks": 10, "miss_ratio": 0.7},
        {"workload": "scan", "policy": "y", "num_blocks": 10, "miss_ratio": 0.9},
    ]
    assert plot.curves({"hit_ratios": rows}) == {
        "reuse": {"x": [(10, 0.7), (20, 0.5)]},
        "scan": {"y": [(10, 0.9)]},
    }


def test_targets_are_computed_from_the_rows() -> None:
    hit_rows = [
        {
            "workload": "reuse",
            "num_blocks": 8,
            "policy": implementations.BASELINE,
            "request_hit_vs_fifo": 1.0,
        },
        {"workload": "reuse", "num_blocks": 8, "policy": "x", "request_hit_vs_fifo": 1.2},
        {"workload": "reuse", "num_blocks": 8, "policy": "y", "request_hit_vs_fifo": 1.4},
        {"workload": "scan", "num_blocks": 8, "policy": "x", "request_hit_vs_fifo": 1.3},
    ]
    cost_rows = [
        {"workload": "mix", "num_blocks": 8, "policy": "x", "ns_per_op_ratio": 1.6,
         "same_mix_ratio": 1.1},
        {"workload": "reuse", "num_blocks": 8, "policy": "x", "ns_per_op_ratio": 1.2,
         "same_mix_ratio": 1.4},
    ]  # fmt: skip
    hit_rows[1]["hits_vs_opt_lower"] = 0.93
    hit_rows[2]["hits_vs_opt_lower"] = 0.88
    checks = policies.targets(hit_rows, cost_rows, [8])
    summary = [(c["policy"], round(c["value"], 2), c["met"]) for c in checks]
    assert summary == [
        ("y", 1.4, True),
        ("x", 1.3, False),
        ("x", 0.93, True),
        ("x", 1.6, False),
        ("x", 1.4, True),
    ]
    assert checks[1]["margin"] == pytest.approx(-0.15)
    assert "lower bound on the optimum, reuse" in checks[2]["check"]
    assert "mix, 8 blocks" in checks[3]["check"]


def test_bad_policy_options_are_rejected() -> None:
    for argv in (
        ["bench", "--policies", "--pools", "0"],
        ["bench", "--policies", "--curve-pools", "x"],
        ["bench", "--policies", "--requests", "0"],
        ["bench", "--policies", "--warmup", "-1"],
        ["bench", "--policies", "--jobs", "0"],
    ):
        with pytest.raises(SystemExit):
            main(argv)
