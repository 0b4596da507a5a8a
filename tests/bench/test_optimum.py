"""The bounds on the optimum's hits (``bench.optimum``), against an exhaustive search.

On streams small enough to search every keep/evict/bypass choice
(``exhaustive.optimum_hits``), the FOO bounds must bracket the optimum and the
paper's PFOO-L must lie above it; with items of one block the relaxation is exact.
A bound that is broken on purpose (``_fill`` ignoring the pool) is shown to fail the
same check, so the check can fail. The online cap is checked on cases worked by hand.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from exhaustive import optimum_hits
from hypothesis import given, settings
from hypothesis import strategies as st

from embedding_cache_bench import bounds, optimum, streams

requests = st.lists(st.sampled_from("abcde"), min_size=1, max_size=14)
sizes_of = st.fixed_dictionaries({key: st.integers(1, 4) for key in "abcde"})


def bracket_errors(keys: list[str], sizes: dict[str, int], pool: int) -> list[str]:
    """What is wrong with the bounds on this stream: empty when they hold."""
    best = optimum_hits(keys, sizes, pool)
    found = optimum.foo_bounds(keys, [sizes[k] for k in keys], pool)
    errors = []
    if not found.foo_lower <= best:
        errors.append(f"lower bound {found.foo_lower} above the optimum {best}")
    if not best <= found.foo_upper + 1e-6:
        errors.append(f"upper bound {found.foo_upper} below the optimum {best}")
    if not best <= found.resource_upper:
        errors.append(f"PFOO-L {found.resource_upper} below the optimum {best}")
    return errors


@settings(max_examples=150, deadline=None)
@given(keys=requests, sizes=sizes_of, pool=st.integers(1, 8))
def test_the_bounds_bracket_the_optimum(keys: list[str], sizes: dict[str, int], pool: int) -> None:
    assert bracket_errors(keys, sizes, pool) == []


@settings(max_examples=100, deadline=None)
@given(keys=requests, pool=st.integers(1, 3))
def test_with_one_block_items_both_bounds_are_the_optimum(keys: list[str], pool: int) -> None:
    sizes = dict.fromkeys("abcde", 1)
    found = optimum.foo_bounds(keys, [1] * len(keys), pool)
    best = optimum_hits(keys, sizes, pool)
    assert found.foo_lower == best == pytest.approx(found.foo_upper)


@contextmanager
def fill_ignoring_the_pool() -> Iterator[None]:
    """A planted bug: the schedule keeps every interval, whatever the pool holds."""
    real = optimum._fill
    optimum._fill = lambda found, pool, kept: len(found.starts)
    try:
        yield
    finally:
        optimum._fill = real


def test_the_bracket_check_catches_a_lower_bound_that_overfills_the_pool() -> None:
    # Three items of 2 blocks in turn, pool 2: only one can stay between its requests.
    keys = ["a", "b", "c", "a", "b", "c"]
    sizes = {"a": 2, "b": 2, "c": 2, "d": 1, "e": 1}
    assert bracket_errors(keys, sizes, 2) == []
    with fill_ignoring_the_pool():
        assert bracket_errors(keys, sizes, 2) == ["lower bound 3 above the optimum 1"]


def test_only_counted_requests_earn_hits() -> None:
    keys = ["a", "a", "a", "b", "a"]
    found = optimum.foo_bounds(keys, [1] * 5, 1, warmup=2)
    assert (found.requests, found.foo_lower, round(found.foo_upper)) == (3, 2, 2)


def test_an_item_larger_than_the_pool_is_never_a_hit() -> None:
    found = optimum.foo_bounds(["big", "big", "big"], [5, 5, 5], 4)
    assert (found.foo_lower, found.foo_upper, found.resource_upper) == (0, 0.0, 0)


def test_the_relaxation_splits_where_sizes_do_not_pack() -> None:
    # Pool 3; a (2 blocks) and b (2) each come back once, overlapping: OPT keeps one,
    # the relaxation fills the third block with half of the other (1.5 hits).
    found = optimum.foo_bounds(["a", "b", "a", "b"], [2, 2, 2, 2], 3)
    assert found.foo_lower == 1
    assert found.foo_upper == pytest.approx(1.5)
    assert found.fractional >= 1
    assert found.gap == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    ("keys", "sizes", "pool", "warmup", "message"),
    [
        (["a"], [1, 1], 1, 0, "1 keys but 2 sizes"),
        (["a"], [0], 1, 0, "size 0"),
        (["a"], [1], 1, 2, "warmup 2 outside"),
        (["a"], [1], 0, 0, "pool 0 blocks"),
    ],
)
def test_bad_input_names_what_is_wrong(
    keys: list[str], sizes: list[int], pool: int, warmup: int, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        optimum.foo_bounds(keys, sizes, pool, warmup)


def test_the_online_cap_is_the_fractional_knapsack() -> None:
    # Densities: a 0.5/1, b 0.3/2, c 0.2/4. Pool 2: all of a, half of b.
    assert optimum.online_bound([0.5, 0.3, 0.2], [1, 2, 4], 2) == pytest.approx(0.65)
    assert optimum.online_bound([0.5, 0.3, 0.2], [1, 2, 4], 7) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="2 probabilities but 1 sizes"):
        optimum.online_bound([0.5, 0.5], [1], 2)


def test_no_policy_beats_the_online_cap_on_an_independent_stream() -> None:
    # The cap is an expectation; over 20,000 independent draws every shipped
    # configuration stays below it (its spread is about 0.3% here).
    rng = random.Random(7)
    probabilities = [1 / (rank + 1) for rank in range(200)]
    total = sum(probabilities)
    probabilities = [p / total for p in probabilities]
    sizes = [rng.randint(1, 8) for _ in probabilities]
    keys = rng.choices(range(200), probabilities, k=20_000)
    spec = streams.StreamSpec("reuse", len(keys), 0, 0)
    stream = streams.Stream(
        spec, tuple(f"k{k}" for k in keys), tuple(sizes[k] for k in keys), "independent"
    )
    cap = optimum.online_bound(probabilities, sizes, 64) * len(keys)
    found = optimum.foo_bounds(stream.keys, stream.sizes, 64)
    from embedding_cache_bench import hit_ratios
    from embedding_cache_bench.implementations import cache_factory, configuration_names

    for name in configuration_names():
        hits = hit_ratios.simulate(stream, cache_factory(name)(64)).hits
        assert hits <= cap * 1.01, name
        assert hits <= found.foo_upper, name


def test_the_policies_bench_streams_carry_their_popularity() -> None:
    spec = streams.StreamSpec("scan", 100, 0, 0, items=50)
    probabilities, sizes = streams.popularity(spec)
    assert len(probabilities) == len(sizes) == 50
    assert sum(probabilities) == pytest.approx(1 - streams.SCAN_FRACTION)
    assert probabilities == sorted(probabilities, reverse=True)


def test_each_hit_row_gets_its_fractions_of_the_bounds() -> None:
    stream = streams.make_stream(streams.StreamSpec("reuse", 600, 200, 0, items=40))
    rows = bounds.bound_rows([stream], [4_096])
    (row,) = rows
    assert row["foo_lower"] <= row["foo_upper"] <= row["resource_upper"]
    hit = {"workload": "reuse", "num_blocks": 4_096, "hits": row["foo_lower"]}
    (out,) = bounds.with_fractions([hit], rows)
    assert out["hits_vs_opt_lower"] == 1.0
    assert out["hits_vs_opt_upper"] == pytest.approx(row["foo_lower"] / row["foo_upper"])
