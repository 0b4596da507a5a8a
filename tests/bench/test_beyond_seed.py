"""``bench --beyond-seed``: memory, construction and speed beside the seed, targets, the CLI.

Tiny sizes only; no timing is asserted: memory figures are checked to be
positive and sane, the rest for their shape and arithmetic.
"""

from __future__ import annotations

import argparse
import json
import tracemalloc

import pytest
from bench_cli import main

from embedding_cache_bench import (
    beyond,
    command,
    construction,
    contiguity,
    implementations,
    memory,
    report,
    runner,
    seed_speed,
)

IMPLS = list(implementations.factories())
#: What --contiguity measures besides: every policy with contiguity-aware eviction, each k.
CONTIGUITY_IMPLS = list(implementations.factories(contiguity=contiguity.CONTIGUITY_BOUNDS))
#: What ``--speed-vs-seed`` times by default: the seed, the baseline with every allocator,
#: and the contiguous configuration (extents, k = 4).
SPEED_IMPLS = [
    implementations.SEED,
    *(
        implementations.name(implementations.BASELINE, kind)
        for kind in implementations.allocator_names()
    ),
    *(
        implementations.name(implementations.BASELINE, implementations.CONTIGUOUS_ALLOCATOR, k)
        for k in seed_speed.DEFAULT_CONTIGUITY
    ),
]
#: The sections whose rows are not ``IMPLS``.
SECTION_IMPLS = {"contiguity": CONTIGUITY_IMPLS, "speed": SPEED_IMPLS}
#: Every allocator, the default first.
ALLOCATORS = implementations.allocator_names()
#: Every section, tiny.
TINY_ARGV = [
    "--scale-sizes=64,128",
    "--ops=200",
    "--repeat=1",
    "--construction-blocks=4096",
    "--memory-pool=4096",
    "--memory-entries=100",
    "--shared-ops=2000",
    "--token-pool=16384",
    "--token-warmup=50",
    "--token-requests=200",
]


def test_traced_bytes_sees_what_is_kept_and_leaves_tracing_as_it_was() -> None:
    assert not tracemalloc.is_tracing()
    cost, kept = memory.traced_bytes(lambda: bytearray(100_000))
    assert isinstance(kept, bytearray)
    assert 100_000 <= cost < 101_000
    freed, _ = memory.traced_bytes(lambda: len(bytearray(100_000)))  # dropped at once
    assert abs(freed) < 1_000
    assert not tracemalloc.is_tracing()


def test_memory_figures_are_positive_and_sane() -> None:
    out = memory.measure(pool_blocks=8192, entries=500, entry_blocks=4)
    assert [row["impl"] for row in out["rows"]] == IMPLS
    assert out["fill_pool_blocks"] == memory.FILL_HEADROOM * 500 * 4
    for row in out["rows"]:
        # Built and filled: at least the entries' ids (8 B a slot) per block.
        assert 8 < row["full_bytes_per_block"] < 10_000
        # An empty pool costs something (coalesced extents: a few objects for all of it); nobody
        # needs a kilobyte per block.
        assert 0 < row["pool_bytes_per_block"] < 1_000
        # An entry is an object, a tuple of 4 ids and an index slot: 100 B .. 10 kB.
        assert 100 < row["entry_bytes"] < 10_000
    seed = out["rows"][0]
    assert seed["pool_vs_seed"] == 1.0 and seed["entry_vs_seed"] == 1.0
    # The seed's pool: a list of ids (8 B a slot) holding int objects (28 B each).
    assert 30 < seed["pool_bytes_per_block"] < 50


def test_more_blocks_per_entry_cost_more() -> None:
    factory = implementations.SEED_FACTORY
    assert memory.entry_bytes(factory, 300, 16) > memory.entry_bytes(factory, 300, 2)
    with pytest.raises(ValueError):
        memory.entry_bytes(factory, 0, 4)


def test_construction_times_every_implementation() -> None:
    out = construction.measure(num_blocks=2048, repeat=3)
    assert out["num_blocks"] == 2048
    assert [row["impl"] for row in out["rows"]] == IMPLS
    for row in out["rows"]:
        assert len(row["seconds_runs"]) == 3 and row["seconds"] > 0
    assert out["rows"][0]["vs_seed"] == 1.0
    with pytest.raises(ValueError):
        construction.measure(num_blocks=16, repeat=0)


def test_speed_replays_the_seeds_stream_on_the_baseline() -> None:
    out = seed_speed.measure(n_ops=1500, repeat=2)
    assert out["calls"] >= 1500 and out["num_blocks"] == 4096
    assert [row["impl"] for row in out["rows"]] == SPEED_IMPLS
    assert out["rows"][0]["vs_seed"] == 1.0
    assert all(row["ns_per_op"] > 0 and len(row["ns_per_op_runs"]) == 2 for row in out["rows"])
    # The seed and the drop-in on either allocator evict alike: no call is refused.
    assert [row["refused_calls"] for row in out["rows"][:3]] == [0, 0, 0]


def test_speed_times_a_configuration_that_finds_calls_of_the_seeds_stream_illegal() -> None:
    # Contiguity's extra victims evict entries the seed kept: on the whole stream some
    # later loads and releases of them are refused (KeyError), timed as compare.py
    # times them, not ending the run.
    script = seed_speed.seed_script()
    name = implementations.name(implementations.BASELINE, implementations.CONTIGUOUS_ALLOCATOR, 4)
    factory = implementations.factories(
        [implementations.BASELINE],
        allocators=[implementations.CONTIGUOUS_ALLOCATOR],
        contiguity=[4],
    )[name]
    with pytest.raises(KeyError):
        runner.time_script(script, factory)
    assert runner.refused_calls(script, factory, seed_speed.TOLERATED) > 0
    assert runner.time_script(script, factory, tolerate=seed_speed.TOLERATED) > 0


def test_targets_are_judged_from_the_figures() -> None:
    # Implementation names are data to ``targets`` (only "seed" is special), so these
    # rows use made-up ones.
    result = {
        "construction": {
            "num_blocks": 8,
            "rows": [{"impl": "seed", "seconds": 9.0}, {"impl": "x", "seconds": 0.2}],
        },
        "memory": {
            "rows": [
                {"impl": "seed", "entry_vs_seed": 1.0},
                {"impl": "y", "entry_vs_seed": 1.25},
            ]
        },
        "speed": {
            "rows": [
                {"impl": "seed", "vs_seed": 1.0},
                {"impl": "x", "vs_seed": 0.7},
                # a contiguous configuration is judged against its own target (1.2x)
                {"impl": "x/extents/k4", "vs_seed": 1.1},
                {"impl": "y/extents/k4", "vs_seed": 1.3},
            ]
        },
        "scale": {
            "rows": [
                {"impl": "seed", "num_blocks": 8, "vs_smallest": 1.0,
                 "same_mix_vs_smallest": 1.0, "growth_over_seeds": 1.0},
                {"impl": "seed", "num_blocks": 64, "vs_smallest": 2.0,
                 "same_mix_vs_smallest": 2.0, "growth_over_seeds": 1.0},
                {"impl": "x", "num_blocks": 8, "vs_smallest": 1.0,
                 "same_mix_vs_smallest": 1.0, "growth_over_seeds": 1.0},
                {"impl": "x", "num_blocks": 64, "vs_smallest": 1.6,
                 "same_mix_vs_smallest": 1.2, "growth_over_seeds": 0.8},
            ]
        },
        "contiguity": {
            "rows": [
                {"workload": "shared", "impl": "seed", "runs_per_entry": 5.8},
                {"workload": "shared", "impl": "z", "runs_per_entry": 1.4},
            ]
        },
    }  # fmt: skip
    checks = beyond.targets(result)
    summary = [(c["check"].split(":")[0], c["policy"], c["met"]) for c in checks]
    assert summary == [
        ("scale", "x", False),
        ("scale", "x", True),
        ("scale", "x", True),
        ("construction of 8 blocks, median", "x", True),
        ("memory", "y", False),
        ("contiguity", "z", True),
        ("speed", "x", True),
        ("speed", "x/extents/k4", True),
        ("speed", "y/extents/k4", False),
    ]
    assert checks[0]["margin"] == pytest.approx(-0.1) and "64 blocks" in checks[0]["check"]
    assert "over the seed's own" in checks[2]["check"] and checks[2]["value"] == 0.8
    assert checks[4]["margin"] == pytest.approx(-0.25)
    assert checks[6]["target"] == "<= 0.8x" and checks[7]["target"] == "<= 1.2x"


def test_cli_every_section_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--beyond-seed", *TINY_ARGV, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {*report.BEYOND_REPORT_KEYS, *beyond.SECTIONS}
    assert out["sections"] == list(beyond.SECTIONS)
    assert out["build"] == "default"
    assert out["options"]["scale_sizes"] == [64, 128]
    assert [row["num_blocks"] for row in out["scale"]["rows"][:2]] == [64, 128]
    assert out["construction"]["num_blocks"] == 4096
    assert out["memory"]["entries"] == 100
    assert out["contiguity"]["token"]["num_blocks"] == 16_384
    assert out["speed"]["calls"] >= 2000
    for name in beyond.SECTIONS:
        impls = [row["impl"] for row in out[name]["rows"]]
        assert set(impls) == set(SECTION_IMPLS.get(name, IMPLS))
    assert {check["check"].split(":")[0].split(" of ")[0] for check in out["targets"]} == {
        "scale",
        "construction",
        "memory",
        "contiguity",
        "speed",
    }


def test_cli_one_section_as_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--memory", "--contiguity", *TINY_ARGV]) == 0
    text = capsys.readouterr().out
    assert "memory (tracemalloc)" in text and "B/entry" in text
    assert "contiguity: runs of consecutive block ids" in text and "runs/entry" in text
    assert "scale:" not in text and "construction:" not in text and "speed:" not in text
    assert f"target: memory: bytes per live entry vs the seed: {IMPLS[1]}" in text


def test_cli_sections_and_default_bench_are_told_apart() -> None:
    parser = argparse.ArgumentParser()
    command.add_parser(parser.add_subparsers(dest="command"))
    assert command.beyond_sections(parser.parse_args(["bench"])) == ()
    assert command.beyond_sections(parser.parse_args(["bench", "--scale", "--memory"])) == (
        "memory",
        "scale",
    )
    assert command.beyond_sections(parser.parse_args(["bench", "--speed-vs-seed"])) == ("speed",)
    assert command.beyond_sections(parser.parse_args(["bench", "--beyond-seed"])) == beyond.SECTIONS
    assert main(["bench", "--policies", "--scale"]) == 2
    parsed = parser.parse_args(["bench", "--scale", "--allocators", ALLOCATORS[-1]])
    assert parsed.allocators == (ALLOCATORS[-1],)
    for argv in (
        ["bench", "--scale", "--scale-sizes", "0"],
        ["bench", "--memory", "--memory-entries", "0"],
        ["bench", "--contiguity", "--token-warmup", "-1"],
        ["bench", "--construction", "--construction-blocks", "x"],
        ["bench", "--memory", "--allocators", "buddy"],
        ["bench", "--memory", "--allocators", f"{ALLOCATORS[0]},{ALLOCATORS[0]}"],
    ):
        with pytest.raises(SystemExit):
            main(argv)
    with pytest.raises(ValueError, match="sections"):
        beyond.Options(sections=("speedup",))


def test_a_tiny_miss_never_reads_as_zero() -> None:
    from embedding_cache_bench.report import _margin

    assert _margin(0.33) == "0.33" and _margin(1.005) == "1.00"
    assert _margin(0.0002) == "0.0002" and float(_margin(0.004)) > 0
