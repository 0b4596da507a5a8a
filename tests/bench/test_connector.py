"""``bench --connector``: today's order loses checked hits, the safe orders lose none, and a
dead reader's leases hold nothing once past their deadline.

Small runs only (2,000 counted requests, a 4,096-block pool, items of 1-64 blocks,
seed 0): a few seconds in all. Nothing is timed.
"""

from __future__ import annotations

import json

import pytest
from bench_cli import main

from embedding_cache import EVICTION_POLICIES, EmbeddingCache
from embedding_cache_bench import (
    connector,
    connector_leases,
    connector_report,
    workload,
)

#: The tight setting every test uses: ~5,000 items checked against a 4,096-block pool.
SPEC = connector.RequestSpec(2_500, 500, 0, item_blocks=(1, 64))
POOL = 4_096
SMALL_ARGV = [
    "bench",
    "--connector",
    "--requests=2000",
    "--warmup=500",
    "--pools=4096",
    "--item-blocks=1,64",
    "--jobs=1",
]

needs_leases = pytest.mark.skipif(
    not connector_leases.leases_available(), reason="this build's EmbeddingCache has no lease()"
)


def _run(order: str, policy: str, **kwargs: object) -> connector.Counts:
    return connector.simulate(connector.make_requests(SPEC), policy, POOL, order, **kwargs)  # type: ignore[arg-type]


def test_requests_are_deterministic_distinct_and_sized() -> None:
    requests = connector.make_requests(SPEC)
    again = connector.make_requests(connector.RequestSpec(2_500, 500, 0, item_blocks=(1, 64)))
    assert again.fingerprint == requests.fingerprint
    assert len(requests.requests) == SPEC.requests
    high = connector.ITEMS_PER_REQUEST[1]
    for request in requests.requests:
        keys = [key for key, _ in request]
        assert 1 <= len(keys) <= high and len(set(keys)) == len(keys)
        assert all(1 <= size <= 64 for _, size in request)
    other = connector.make_requests(connector.RequestSpec(2_500, 500, 1, item_blocks=(1, 64)))
    assert other.fingerprint != requests.fingerprint


def test_todays_order_loses_checked_hits_on_a_tight_pool() -> None:
    lost = {policy: _run("today", policy) for policy in EVICTION_POLICIES}
    # Seed 0: fifo loses 3 of its 1,542 checked hits, and each is re-allocated not
    # ready (a save of an output never computed).
    assert lost["fifo"].lost_before_pin >= 1
    for counts in lost.values():
        assert counts.uncomputed_saves == counts.lost_before_pin
        assert not counts.held_after_drain


@pytest.mark.parametrize("order", [order for order in connector.orders() if order != "today"])
@pytest.mark.parametrize("policy", list(EVICTION_POLICIES))
def test_safe_orders_lose_no_checked_hit(order: str, policy: str) -> None:
    counts = _run(order, policy)
    assert counts.checked_hits > 1_000
    assert counts.lost_before_pin == 0
    assert counts.uncomputed_saves == 0
    assert counts.leases_ended_in_load == 0  # the lease held its load's pin to the end
    assert not counts.held_after_drain


def test_a_lease_shorter_than_the_load_is_counted() -> None:
    """Non-vacuity of leases_ended_in_load: a lease that expires before its load completes."""
    options = connector.Options(lease_seconds=0.0, load_delay=3)
    counts = _run("lease", "fifo", options=options)
    assert counts.leases_ended_in_load > 0


@needs_leases
@pytest.mark.parametrize("policy", list(EVICTION_POLICIES))
def test_a_dead_readers_leases_hold_nothing_after_the_deadline(policy: str) -> None:
    dead = _run("lease", policy).dead_reader
    assert dead is not None
    assert dead["leases"] == connector.DEAD_READER_ITEMS
    # At the deadline the leases are not due: still held. Past it, one call frees them.
    assert dead["blocks_held_at_deadline"] == dead["blocks_leased"] > 0
    assert dead["blocks_held_after_deadline"] == 0
    assert dead["held_entries_after_deadline"] is False


@needs_leases
def test_dead_reader_catches_a_cache_whose_leases_never_expire() -> None:
    def frozen(policy: str, num_blocks: int, _clock: connector_leases.FakeClock) -> workload.Cache:
        # Planted bug: the cache reads a clock that never moves, so no lease is ever due.
        return EmbeddingCache(num_blocks, policy, clock=lambda: 0.0)  # type: ignore[call-arg, unused-ignore]

    dead = _run("lease", "fifo", make=frozen).dead_reader
    assert dead is not None
    assert dead["blocks_held_after_deadline"] == dead["blocks_leased"] > 0


def test_held_at_end_catches_a_load_that_never_unpins() -> None:
    class Leaky(EmbeddingCache):
        """Planted bug: a completed load's unpin is lost."""

        def unpin(self, key: str) -> None:
            pass

    def leaky(policy: str, num_blocks: int, _clock: connector_leases.FakeClock) -> workload.Cache:
        return Leaky(num_blocks, policy)

    assert _run("today", "fifo", make=leaky).held_after_drain
    assert not _run("today", "fifo").held_after_drain


def test_unknown_order_is_refused() -> None:
    with pytest.raises(ValueError, match="order"):
        _run("later", "fifo")


def test_command_reports_every_policy_and_order(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*SMALL_ARGV, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert tuple(report) == connector_report.REPORT_KEYS
    section = report["connector"]
    assert section["names"] == list(EVICTION_POLICIES)
    cells = {(row["policy"], row["num_blocks"], row["order"]) for row in section["rows"]}
    assert cells == {(p, POOL, o) for p in EVICTION_POLICIES for o in connector.orders()}
    assert section["workload"]["stream"] == connector.make_requests(SPEC).fingerprint
    assert main(SMALL_ARGV) == 0
    text = capsys.readouterr().out
    assert "lost before pin" in text and "today" in text and "pin-at-check" in text
    assert ("after deadline" in text) == connector_leases.leases_available()


def test_connector_and_policies_are_separate_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*SMALL_ARGV, "--policies"]) == 2
    assert "separate runs" in capsys.readouterr().err


@pytest.mark.parametrize("order", connector.orders())
def test_failed_and_slow_saves_leave_nothing_held(order: str) -> None:
    """Saves that fail discard; saves in flight at check time are computed, not saved again."""
    options = connector.Options(load_delay=0, save_delay=3, save_failure_rate=0.3)
    counts = _run(order, "fifo", options=options)
    assert counts.failed_saves > 0 and counts.in_flight > 0
    assert not counts.held_after_drain
    if order != "today":
        assert counts.lost_before_pin == 0
