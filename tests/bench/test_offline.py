"""The offline reference of ``bench --policies`` (``bench.offline``).

Belady with bypass is optimal when every item is one block: checked against
an exhaustive search over every keep/evict/admit choice on small streams. With
sizes the reference is a lower bound on the optimum: the exhaustive search
never does worse. Hypothesis draws the streams.
"""

from __future__ import annotations

from typing import Any

import pytest
from exhaustive import optimum_hits
from hypothesis import given, settings
from hypothesis import strategies as st

from embedding_cache import EVICTION_POLICIES
from embedding_cache_bench import (
    hit_ratios,
    implementations,
    offline,
    plot,
    policies,
    report,
    streams,
)


def _stream(keys: list[str], sizes: dict[str, int], warmup: int = 0) -> streams.Stream:
    spec = streams.StreamSpec("reuse", len(keys), warmup, 0)
    return streams.Stream(spec, tuple(keys), tuple(sizes[key] for key in keys), "test")


requests = st.lists(st.sampled_from("abcde"), min_size=1, max_size=14)


def test_next_uses_point_at_the_next_request_of_the_same_key() -> None:
    assert offline.next_uses(("a", "b", "a", "c", "b", "a")) == [
        2,
        4,
        5,
        offline.NEVER,
        offline.NEVER,
        offline.NEVER,
    ]


@settings(max_examples=150, deadline=None)
@given(keys=requests, pool=st.integers(1, 3))
def test_belady_is_optimal_for_one_block_items(keys: list[str], pool: int) -> None:
    sizes = dict.fromkeys("abcde", 1)
    counts = offline.simulate_offline(_stream(keys, sizes), pool, "belady")
    assert counts.hits == optimum_hits(keys, sizes, pool)


@settings(max_examples=150, deadline=None)
@given(
    keys=requests,
    sizes=st.fixed_dictionaries({key: st.integers(1, 4) for key in "abcde"}),
    pool=st.integers(1, 8),
)
def test_every_rule_is_a_lower_bound_on_the_optimum(
    keys: list[str], sizes: dict[str, int], pool: int
) -> None:
    best = optimum_hits(keys, sizes, pool)
    for rule in offline.OFFLINE_RULES:
        counts = offline.simulate_offline(_stream(keys, sizes), pool, rule)
        assert counts.hits <= best
        assert counts.requests == len(keys)
        assert counts.allocs == len(keys) - counts.hits


def test_size_awareness_keeps_the_small_items_when_blocks_are_scarce() -> None:
    # Pool 4: one big item (4 blocks) or two small ones (2 each) fit. The big one is
    # requested next, but keeping it costs two hits on the smalls for one.
    keys = ["s1", "s2", "B", "B", "s1", "s2"]
    sizes = {"s1": 2, "s2": 2, "B": 4}
    plain = offline.simulate_offline(_stream(keys, sizes), 4, "belady")
    sized = offline.simulate_offline(_stream(keys, sizes), 4, "belady-size")
    assert (plain.hits, sized.hits) == (1, 2) == (1, optimum_hits(keys, sizes, 4))
    # Both of B's requests are bypassed: the first because the smalls outrank it, the
    # second because B is never requested again.
    assert (sized.alloc_failures, sized.evictions) == (2, 0)


def test_an_item_never_requested_again_is_not_kept() -> None:
    keys = ["a", "once", "a"]
    sizes = {"a": 2, "once": 2}
    for rule in offline.OFFLINE_RULES:
        counts = offline.simulate_offline(_stream(keys, sizes), 2, rule)
        assert (counts.hits, counts.alloc_failures, counts.evictions) == (1, 1, 0)


def test_the_warm_up_is_not_counted() -> None:
    keys = ["a", "a", "a", "b", "a"]
    counts = offline.simulate_offline(_stream(keys, {"a": 1, "b": 1}, warmup=2), 1, "belady")
    assert (counts.requests, counts.hits, counts.allocs) == (3, 2, 1)


def test_an_unknown_rule_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        offline.simulate_offline(_stream(["a"], {"a": 1}), 1, "lru")


def test_the_reference_is_the_better_rule_and_every_policy_is_measured_against_it() -> None:
    specs = [streams.StreamSpec("scan", 1500, 300, 0)]
    names = list(EVICTION_POLICIES)
    counts = hit_ratios.hit_ratios(specs, [8192], names, offline_rules=tuple(offline.OFFLINE_RULES))
    stream = streams.make_stream(specs[0])
    (reference,) = hit_ratios.reference_rows(counts, [stream], [8192])
    ratios = {rule: row["request_hit_ratio"] for rule, row in reference["by_rule"].items()}
    assert reference["request_hit_ratio"] == max(ratios.values())
    assert ratios[reference["rule"]] == reference["request_hit_ratio"]
    rows = hit_ratios.hit_rows(counts, [stream], [8192], names, implementations.BASELINE)
    for row in rows:
        assert row["request_hit_vs_reference"] == pytest.approx(
            row["request_hit_ratio"] / reference["request_hit_ratio"]
        )
        # Not a theorem for every stream, but on the bench's: knowing the future wins.
        assert row["request_hit_ratio"] < reference["request_hit_ratio"]


def test_the_report_table_and_the_curve_show_the_reference() -> None:
    small: dict[str, Any] = {
        "pools": [8192],
        "curve_pools": [16384],
        "requests": 300,
        "warmup": 100,
        "cost_requests": 50,
        "cost_warmup": 20,
        "mix_sizes": [64],
        "mix_ops": 100,
        "repeat": 1,
        "seed": 0,
    }
    section = policies.measure(**small)
    assert [(row["workload"], row["num_blocks"]) for row in section["reference"]] == [
        (name, pool) for name in streams.WORKLOADS for pool in (8192, 16384)
    ]
    reference_checks = [c for c in section["targets"] if "offline reference" in c["check"]]
    assert len(reference_checks) == len(streams.WORKLOADS)
    curves = plot.curves(section)
    assert all(plot.OFFLINE_LABEL in lines for lines in curves.values())
    text = report.render_policies(
        {"policies": section, "build": "default", "plot": {"files": [], "skipped": None},
         "notes": []}
    )  # fmt: skip
    offline_rows = [line for line in text.splitlines() if "offline (belady" in line]
    assert len(offline_rows) == len(streams.WORKLOADS)
    assert "reuse offline" in text and "scan offline" in text
