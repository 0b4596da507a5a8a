"""The one timing loop: rotating rounds, the warm-up before them, and per-round ratios.

Nothing is timed: the contenders are recorded, not clocked.
"""

from __future__ import annotations

import gc

import pytest

from embedding_cache_bench import rounds


def test_each_round_rotates_the_order_one_step() -> None:
    calls: list[tuple[str, int]] = []

    def measure(name: str, round_: int) -> str:
        calls.append((name, round_))
        return f"{name}{round_}"

    out = rounds.rotating_rounds("abc", 4, measure)
    assert calls == [
        ("a", 0), ("b", 0), ("c", 0),
        ("b", 1), ("c", 1), ("a", 1),
        ("c", 2), ("a", 2), ("b", 2),
        ("a", 3), ("b", 3), ("c", 3),
    ]  # fmt: skip
    assert list(out) == ["a", "b", "c"]  # the given order, whatever the rounds' order
    assert out["b"] == ["b0", "b1", "b2", "b3"]  # each contender's results in round order


def test_the_warm_up_runs_once_before_the_first_round() -> None:
    calls: list[str] = []
    rounds.rotating_rounds(
        [1, 2], 2, lambda key, _round: calls.append(f"m{key}"), warm_up=lambda: calls.append("w")
    )
    assert calls == ["w", "m1", "m2", "m2", "m1"]


def test_no_contenders_and_bad_repeats() -> None:
    assert rounds.rotating_rounds([], 3, lambda key, _round: key) == {}
    assert rounds.rotated([], 5) == []
    assert rounds.rotated([1, 2, 3], 4) == [2, 3, 1]
    warmed: list[int] = []
    with pytest.raises(ValueError, match="repeat"):
        rounds.rotating_rounds([1], 0, lambda key, _round: key, warm_up=lambda: warmed.append(1))
    assert warmed == []  # refused before any work


def test_ratios_are_medians_of_per_round_ratios() -> None:
    # Every round's ratio is 2 though the rounds' speeds differ 100x; the median of
    # the mine runs over that of the base runs would be 12 / 5 = 2.4.
    assert rounds.median_ratio([2.0, 12.0, 400.0], [1.0, 6.0, 200.0]) == 2.0
    assert rounds.median_ratio([2.0, 12.0, 400.0], [1.0, 5.0, 200.0]) == 2.0
    assert rounds.median_ratio([3.0, 3.0, 3.0], [0.0, 0.0, 1.0]) == 0.0  # base 0: ratio 0
    with pytest.raises(ValueError):
        rounds.median_ratio([1.0], [1.0, 2.0])


def test_same_mix_ratio_weights_both_by_the_same_counts() -> None:
    # "b" is missing from the costs, so only "a" (1 call) is compared: 40 / 10.
    assert rounds.same_mix_ratio({"a": 1, "b": 3}, {"a": 10.0, "b": 10.0}, {"a": 40.0}) == 4.0
    # Each call costs 3x, whatever the counts: 3x.
    counts = {"get": 9, "alloc": 1}
    assert rounds.same_mix_ratio(
        counts, {"get": 10.0, "alloc": 100.0}, {"get": 30.0, "alloc": 300.0}
    ) == pytest.approx(3.0)
    assert rounds.same_mix_ratio({"get": 1}, {"get": 0.0}, {"get": 5.0}) == 0.0  # base is free


def test_the_collector_is_thawed_even_after_an_error() -> None:
    with pytest.raises(RuntimeError), rounds.frozen_gc():
        assert gc.get_freeze_count() > 0  # everything alive is in the permanent generation
        raise RuntimeError("boom")
    assert gc.get_freeze_count() == 0
