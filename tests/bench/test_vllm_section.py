"""``bench --vllm``: vLLM's real engine loop per policy and configuration, upstream's
connector beside the plugin, on a small configuration.

A 128 MiB pool (16,384 rows of 8 KiB), its catalogue scaled with it, seed 0, 300
steps of arrivals, on which upstream's connector already leaks. Needs the ``[vllm]``
extra (vLLM with torch).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from typing import Any

import pytest
from bench_cli import main

from embedding_cache import EVICTION_POLICIES
from embedding_cache_bench import real_scheduler, real_scheduler_report
from embedding_cache_checker.engine.figures import CONFIGURATIONS

ROW_BYTES = real_scheduler.DEFAULT_HIDDEN_SIZE * real_scheduler.DEFAULT_DTYPE_BYTES
BLOCKS = 16_384
POOL_BYTES = BLOCKS * ROW_BYTES
STEPS = 300
ARGV = ["bench", "--vllm", "--pool-bytes=128MiB", f"--steps={STEPS}", "--seed=0", "--jobs=1"]


def _run(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue()


@pytest.fixture(scope="module")
def measured() -> dict[str, Any]:
    result: dict[str, Any] = json.loads(_run([*ARGV, "--json"]))
    return result


@pytest.fixture(scope="module")
def table(measured: dict[str, Any]) -> str:
    # The table the command prints without --json, from the same run (a second run
    # would take as long again; the counts are deterministic anyway).
    return real_scheduler_report.render(measured)


def test_the_json_report_has_every_row(measured: dict[str, Any]) -> None:
    assert tuple(measured) == real_scheduler_report.REPORT_KEYS
    assert measured["command"] == "embedding-cache bench --vllm"
    (pool,) = measured["vllm"]["pools"]
    assert (pool["pool_bytes"], pool["blocks"]) == (POOL_BYTES, BLOCKS)
    assert (pool["steps"], pool["catalogue"]) == (STEPS, real_scheduler.catalogue_for(BLOCKS))
    assert pool["scheduler_class"] == "AsyncScheduler"
    labels = [(row["scheduler"], row["cache"]) for row in pool["rows"]]
    expected = [("upstream", "upstream's")]
    expected += [
        ("plugin", f"{policy}/{name}") for policy in EVICTION_POLICIES for name in CONFIGURATIONS
    ]
    assert labels == expected


def test_upstream_leaks_and_the_plugin_holds_nothing(measured: dict[str, Any]) -> None:
    (pool,) = measured["vllm"]["pools"]
    upstream, *rows = pool["rows"]
    assert upstream["kind"] == "upstream"
    assert upstream["checked_hits_lost"] > 0 and upstream["saves_never_made"] > 0
    assert upstream["never_ready"] > 0 and upstream["never_ready_blocks"] > 0
    assert upstream["held_blocks"] >= upstream["never_ready_blocks"]
    assert upstream["pending_push_work"] is True and upstream["went_idle"] is False
    assert upstream["median_vs_upstream"] == upstream["p99_vs_upstream"] == 1.0
    plugin = [row for row in rows if row["kind"] == "plugin"]
    assert len(plugin) == len(EVICTION_POLICIES) * len(CONFIGURATIONS)
    for row in plugin:
        assert (row["checked_hits_lost"], row["saves_never_made"], row["reused_in_flight"]) == (
            0,
            0,
            0,
        ), row["cache"]
        assert (row["never_ready"], row["never_ready_blocks"], row["held_blocks"]) == (0, 0, 0)
        assert row["pending_push_work"] is False and row["went_idle"] is True
        assert row["encoder_misses"] == 0
        assert 0 < row["loads"] <= row["hits"]
    for row in pool["rows"]:
        assert 0 < row["steps_timed"] <= STEPS
        assert row["median_step_seconds"] > 0 and row["p99_step_seconds"] > 0
        assert row["median_vs_upstream"] > 0 and row["p99_vs_upstream"] > 0


def test_no_row_loads_more_than_the_optimum(measured: dict[str, Any]) -> None:
    (pool,) = measured["vllm"]["pools"]
    for row in pool["rows"]:
        # No cache serves more hits than the optimum on the stream it was sent.
        assert row["opt_lower"] <= row["opt_upper"]
        assert row["loads"] <= row["opt_upper"] + 1e-6, row["cache"]
        assert row["loads_vs_opt_lower"] == pytest.approx(row["loads"] / row["opt_lower"])
        assert row["distinct_items"] <= row["accesses"]


def test_the_table_has_the_rows_and_columns(table: str, measured: dict[str, Any]) -> None:
    lines = table.splitlines()
    assert "8,192 bytes" in lines[0]
    (pool,) = measured["vllm"]["pools"]
    heading = f"128 MiB pool = 16,384 blocks, catalogue 125 items, {STEPS} steps of arrivals ("
    at = next(i for i, line in enumerate(lines) if line.startswith(heading)) + 1
    first = pool["rows"][0]
    assert lines[at].startswith(f"the cache served {first['accesses']:,} requests for ")
    assert lines[at].endswith(f"lie in [{first['opt_lower']:,}, {first['opt_upper']:,.0f}]")
    assert re.split(r"\s{2,}", lines[at + 1]) == [
        "scheduler",
        "cache",
        "loads",
        "of OPT lower",
        "of OPT upper",
        "lost",
        "never made",
        "never ready",
        "their blocks",
        "blocks held",
        "idle",
        "median",
        "p99",
    ]
    body = lines[at + 3 : at + 3 + len(pool["rows"])]
    for line, row in zip(body, pool["rows"], strict=True):
        cells = re.split(r"\s{2,}", line)
        # The same counts as the JSON run's: they are deterministic.
        assert cells[:11] == [
            row["scheduler"],
            row["cache"],
            f"{row['loads']:,}",
            f"{row['loads_vs_opt_lower']:.1%}",
            f"{row['loads_vs_opt_upper']:.1%}",
            f"{row['checked_hits_lost']:,}",
            f"{row['saves_never_made']:,}",
            f"{row['never_ready']:,}",
            f"{row['never_ready_blocks']:,}",
            f"{row['held_blocks']:,}",
            "yes" if row["went_idle"] else "never",
        ]
        assert cells[11].endswith("x") and cells[12].endswith("x")
    assert re.split(r"\s{2,}", body[0])[11:] == ["1.00x", "1.00x"]
    assert any(line.startswith("note: ") for line in lines)


@pytest.mark.parametrize(
    ("text", "size"),
    [("1GiB", 1 << 30), ("4 GiB", 4 << 30), ("512mib", 512 << 20), ("1048576", 1 << 20)],
)
def test_pool_sizes_parse(text: str, size: int) -> None:
    assert real_scheduler_report.parse_bytes(text) == size


@pytest.mark.parametrize("text", ["", "0", "1GB", "-1GiB", "1.5GiB"])
def test_bad_pool_sizes_are_refused(text: str) -> None:
    with pytest.raises(Exception, match="expected a size in bytes"):
        real_scheduler_report.parse_bytes(text)


def test_the_default_pools_hold_131072_and_524288_rows() -> None:
    assert [size // ROW_BYTES for size in real_scheduler.DEFAULT_POOLS] == [131_072, 524_288]
    assert [real_scheduler.catalogue_for(n) for n in (131_072, 524_288)] == [1_000, 4_000]


def test_a_pool_smaller_than_an_item_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--vllm", "--pool-bytes=1MiB", "--steps=1"]) == 2
    assert "fewer than an item's 2,048" in capsys.readouterr().err
