"""The bench's workload is deterministic and legal, and its report has the documented shape.

No timing is asserted anywhere: the bench measures, it does not test speed.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import icontract
import pytest
from bench_cli import SEED_CALLS

from embedding_cache import CacheError, EmbeddingCache
from embedding_cache.entry import CacheEntry
from embedding_cache.policies import FifoPolicy
from embedding_cache.verification import state_of
from embedding_cache_bench import report, runner, workload
from embedding_cache_checker.cli import main


def test_record_is_deterministic() -> None:
    a = workload.record(64, 400, seed=3)
    b = workload.record(64, 400, seed=3)
    assert a == b
    assert workload.record(64, 400, seed=4).ops != a.ops


def test_fewer_ops_give_a_prefix() -> None:
    """The checked build's shorter script is a prefix of the default build's."""
    long = workload.record(128, 600, seed=1)
    short = workload.record(128, 100, seed=1)
    assert short.warmup == long.warmup
    assert long.ops[: len(short.ops)] == short.ops
    assert short.measured_ops == 100 and long.measured_ops == 600


@pytest.mark.parametrize("num_blocks", [8, 64, 300])
def test_replay_is_legal_and_reproduces_the_answers(num_blocks: int) -> None:
    script = workload.record(num_blocks, 800, seed=num_blocks)
    cache = EmbeddingCache(num_blocks)
    assert workload.replay(script, cache) == list(script.outcomes)
    cache.check()  # the replay left every named invariant intact


def test_the_mix_exercises_every_operation_under_pressure() -> None:
    script = workload.record(256, 3000, seed=0)
    names = {name for name, _ in script.ops[script.warmup :]}
    assert names == SEED_CALLS
    stats = script.stats()
    assert stats.ops == 3000
    assert 0 < stats.hits < stats.lookups
    assert stats.evictions > 0  # the catalogue exceeds the pool: real eviction pressure
    assert 0.0 < stats.hit_ratio < 1.0


def test_small_pools_get_small_items() -> None:
    shape = workload.shape_for(16)
    assert max(shape.item_sizes) <= 2
    assert workload.shape_for(4096).catalogue > workload.shape_for(256).catalogue
    with pytest.raises(ValueError):
        workload.shape_for(0)


def test_stats_are_counted_from_the_answers() -> None:
    """Hits, evictions and alloc failures come from the outcomes, window only."""
    script = workload.Script(
        shape=workload.shape_for(16),
        seed=0,
        ops=(
            ("alloc", ("w", 1)),  # warm-up: not counted
            ("get", ("a",)),
            ("alloc", ("a", 2)),
            ("pin_if_ready", ("b",)),
            ("get", ("c",)),
            ("alloc", ("d", 9)),
        ),
        outcomes=(
            ((0,), 0),
            workload.ABSENT,
            ((1, 2), 3),
            workload.READY,
            workload.NOT_READY,
            None,
        ),
        warmup=1,
    )
    assert script.stats() == workload.WindowStats(
        ops=5, lookups=3, hits=1, allocs=2, alloc_failures=1, evictions=3
    )


class _EvictsNewestFirst(EmbeddingCache):
    """A planted bug: an alloc that needs space evicts the newest evictable entry.

    The one place here that names a policy: reversing an eviction order needs that
    order's own structure, and the default cache (which the script is recorded on)
    keeps fifo's queue.
    """

    def alloc(
        self, key: str, n_blocks: int, shape: tuple[int, int] | None = None
    ) -> CacheEntry | None:
        state = state_of(self)
        assert isinstance(state.policy, FifoPolicy)  # the bug is planted in fifo's queue
        queue = state.policy.queue
        while len(state.free) < n_blocks and queue:
            victim, _ = queue.popitem(last=True)
            blocks = state.entries.pop(victim).block_ids
            state.evictable_blocks -= len(blocks)
            state.free.extend(blocks)
        return super().alloc(key, n_blocks, shape)


class _ForgetsDiscard(EmbeddingCache):
    """A planted bug: discard drops the entry but leaks its blocks."""

    def discard(self, key: str) -> None:
        del state_of(self).entries[key]


@pytest.mark.parametrize("faulty", [_EvictsNewestFirst, _ForgetsDiscard])
def test_replay_catches_a_planted_bug(faulty: Callable[[int], EmbeddingCache]) -> None:
    script = workload.record(64, 1500, seed=2)
    try:
        answers = workload.replay(script, faulty(64))
    except (CacheError, icontract.ViolationError):
        return  # a call the correct cache allowed became illegal (or broke a contract)
    assert answers != list(script.outcomes)


def test_replay_catches_a_tampered_script() -> None:
    script = workload.record(64, 500, seed=5)
    first_ready = next(i for i, (name, _) in enumerate(script.ops) if name == "mark_ready")
    tampered = workload.Script(
        script.shape,
        script.seed,
        script.ops[:first_ready] + script.ops[first_ready + 1 :],
        script.outcomes[:first_ready] + script.outcomes[first_ready + 1 :],
        script.warmup - 1,
    )
    with pytest.raises(CacheError):
        workload.replay(tampered, EmbeddingCache(64))


def test_measure_in_process_reports_every_size() -> None:
    out = runner.measure([32, 64], n_ops=200, repeat=2, seed=0)
    assert out["build"] == "default"
    assert [row["num_blocks"] for row in out["results"]] == [32, 64]
    for row in out["results"]:
        assert row["ops"] == 200
        assert len(row["ns_per_op_runs"]) == 2
        assert row["ns_per_op"] > 0
        assert sum(row["op_counts"].values()) == 200
        assert set(row["ns_per_call_by_op"]) == set(row["op_counts"])


def test_cli_bench_json_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bench", "--sizes", "64", "--ops", "500", "--repeat", "1", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert tuple(out) == report.REPORT_KEYS
    assert out["builds"] == ["default", "checked"]
    assert out["ops"] == {"default": 500, "checked": 50}
    assert [(row["build"], row["num_blocks"]) for row in out["results"]] == [
        ("default", 64),
        ("checked", 64),
    ]
    for row in out["results"]:
        assert tuple(row) == report.RESULT_KEYS
        assert row["ops"] == out["ops"][row["build"]]
        assert 0.0 <= row["hit_ratio"] <= 1.0
    assert set(out["checked_over_default"]) == {"64"}
    assert out["checked_over_default"]["64"] > 0
    assert set(out["scaling"]) == {"default", "checked"}
    assert any("checked build runs 50" in note for note in out["notes"])


def test_table_output_names_every_build_and_size(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["bench", "--sizes", "32,64", "--ops", "300", "--repeat", "1", "--builds", "default"]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "hit ratio" in text and "alloc fails" in text
    assert "default build: per-op time at 64 blocks / at 32 blocks" in text
    assert "checked" not in text.split("note:")[0]


def test_bad_arguments_are_rejected() -> None:
    for argv in (
        ["bench", "--sizes", "0"],
        ["bench", "--sizes", "x"],
        ["bench", "--builds", "fast"],
        ["bench", "--repeat", "0"],
    ):
        with pytest.raises(SystemExit):
            main(argv)


def test_a_failing_child_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(runner.BUILD_ENV, "default", "bogus")  # the child's import fails
    with pytest.raises(runner.BenchError, match="default build failed"):
        runner.run_build("default", [16], 10, 1, 0)


def _row(
    num_blocks: int, ns: float, counts: dict[str, int], costs: dict[str, float]
) -> dict[str, object]:
    return {
        "num_blocks": num_blocks,
        "catalogue": 1,
        "item_sizes": [1],
        "warmup_ops": 0,
        "ops": sum(counts.values()),
        "ns_per_op": ns,
        "ns_per_op_runs": [ns, ns],
        "ns_per_call_by_op": costs,
        "op_counts": counts,
        "lookups": 0,
        "hits": 0,
        "hit_ratio": 0.0,
        "allocs": 0,
        "evictions": 0,
        "alloc_failures": 0,
    }


def test_ratios_compare_like_with_like() -> None:
    """Every call costs 3x at the big pool, but the big pool's mix is mostly cheap gets:
    the plain ratio says 1.5x, the same-mix ratio says 3x."""
    small = _row(16, 100.0, {"get": 1, "alloc": 1}, {"get": 10.0, "alloc": 100.0})
    large = _row(1024, 150.0, {"get": 9, "alloc": 1}, {"get": 30.0, "alloc": 300.0})
    checked = _row(16, 700.0, {"get": 1, "alloc": 1}, {"get": 10.0, "alloc": 1000.0})
    checked_large = _row(1024, 700.0, {"get": 1, "alloc": 1}, {"get": 10.0, "alloc": 1000.0})
    runs = {
        "default": {"results": [small, large]},
        "checked": {"results": [checked, checked_large]},
    }
    out = report.build_report(
        runs, sizes=[16, 1024], ops={"default": 2, "checked": 2}, repeat=2, seed=0
    )
    assert out["checked_over_default"] == {"16": 7.0, "1024": 700.0 / 150.0}
    scaling = out["scaling"]["default"]
    assert (scaling["smallest"], scaling["largest"]) == (16, 1024)
    assert scaling["ns_per_op_ratio"] == 1.5
    assert scaling["same_mix_ratio"] == pytest.approx(3.0)
    assert scaling["by_op"] == {"get": 3.0, "alloc": 3.0}
    assert out["scaling"]["checked"]["same_mix_ratio"] == pytest.approx(1.0)
    text = report.render(out)
    assert "per-op time at 1,024 blocks / at 16 blocks = 1.50x; same mix: 3.00x" in text
    assert "7.0x" in text
