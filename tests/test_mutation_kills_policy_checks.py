"""Each policy's own invariant check (``PolicyChecks.check``) names what is broken.

The sweep (``invariants.evictable_set_inv``) tests the generic half of
EvictableSetInv before it asks the policy, so a broken policy structure that
the generic half cannot see reaches ``check`` only through these branches.
Here ``check`` is called directly: on the consistent state of a cache with
an entry in every lifecycle state it returns None, and each corruption of
one field makes it return the sentence naming the invariant and the
offending keys or values, including at the bounds of each range.

Found by mutation testing (mutation/SURVIVORS.md): without these, a check
weakened to accept a corrupt state, or reporting the wrong keys, passed.
"""

from __future__ import annotations

import pytest
from cache_observe import cache_with_every_state, put_pinned, put_ready

from embedding_cache import EmbeddingCache, FifoPolicy, GdsfPolicy, S3FifoPolicy
from embedding_cache.policies import EvictionPolicy


def _sizes(cache: EmbeddingCache) -> tuple[dict[str, int], dict[str, int]]:
    """(ready key -> blocks, ready+unpinned key -> blocks), as the sweep passes them."""
    entries = cache._state.entries
    ready = {k: len(e.block_ids) for k, e in entries.items() if e.pin_count >= 0}
    evictable = {k: n for k, n in ready.items() if entries[k].pin_count == 0}
    return ready, evictable


def _checked(eviction: str) -> tuple[EvictionPolicy, dict[str, int], dict[str, int]]:
    cache = cache_with_every_state(eviction)
    ready, evictable = _sizes(cache)
    policy = cache._state.policy
    assert policy.checks().check(ready, evictable) is None  # control: the real state passes
    return policy, ready, evictable


# ---------------------------------------------------------------- fifo


def test_fifo_reports_the_keys_its_queue_has_and_lacks() -> None:
    policy, ready, _ = _checked("fifo")
    wrong = {"q": 1, "z": 3}
    message = policy.checks().check(ready, wrong)
    assert message == "EvictableSetInv: queue has extra ['r'], lacks ['z']"


def test_fifo_reports_a_size_that_disagrees_with_the_entry() -> None:
    policy, ready, evictable = _checked("fifo")
    assert isinstance(policy, FifoPolicy)
    policy.queue["q"] = 5
    assert (
        policy.checks().check(ready, evictable)
        == "EvictableSetInv: queue says 5 blocks for 'q', entry holds 1"
    )


# ---------------------------------------------------------------- gdsf


def _gdsf() -> tuple[GdsfPolicy, dict[str, int], dict[str, int]]:
    policy, ready, evictable = _checked("gdsf")
    assert isinstance(policy, GdsfPolicy)
    return policy, ready, evictable


def test_gdsf_reports_the_members_it_has_and_lacks() -> None:
    policy, ready, _ = _gdsf()
    message = policy.checks().check(ready, {"q": 1, "z": 3})
    assert message == "EvictableSetInv: members have extra ['r'], lack ['z']"


def test_gdsf_reports_use_counts_kept_for_the_wrong_keys() -> None:
    policy, ready, evictable = _gdsf()
    del policy.freq["p"]
    assert policy.checks().check(ready, evictable) == (
        "EvictableSetInv: use counts kept for ['q', 'r'], ready keys ['p', 'q', 'r']"
    )


@pytest.mark.parametrize(("count", "ok"), [(0, False), (1, True), (2, True), (3, False)])
def test_gdsf_use_counts_must_lie_in_one_to_max_freq(count: int, ok: bool) -> None:
    cache = EmbeddingCache(8, eviction=lambda n: GdsfPolicy(n, max_freq=2))
    put_ready(cache, "r", 2)
    put_pinned(cache, "p", 2)
    ready, evictable = _sizes(cache)
    policy = cache._state.policy
    assert isinstance(policy, GdsfPolicy)
    policy.freq["p"] = count
    expected = None if ok else f"PolicyTypeOK: 'p' has use count {count}, outside 1..2"
    assert policy.checks().check(ready, evictable) == expected


def test_gdsf_a_priority_may_equal_the_clock_but_not_fall_below_it() -> None:
    policy, ready, evictable = _gdsf()
    lowest = min(prio for prio, _ in policy.members.values())
    policy.clock = lowest
    assert policy.checks().check(ready, evictable) is None
    policy.clock = lowest + 1
    message = policy.checks().check(ready, evictable)
    assert message is not None and message.startswith("ClockBelowPrioInv: ")
    assert f"< clock {lowest + 1}" in message


def test_gdsf_every_member_needs_a_heap_item() -> None:
    policy, ready, evictable = _gdsf()
    item = policy._queued.pop("q")
    policy._heap.remove(item)
    assert policy.checks().check(ready, evictable) == (
        "EvictableSetInv: 'q''s heap item None is not a lower bound"
    )


def test_gdsf_a_heap_item_above_its_keys_truth_is_reported() -> None:
    policy, ready, evictable = _gdsf()
    prio, seq = policy.members["q"]
    old = policy._queued["q"]
    above = (prio, seq + 1, "q")  # same priority, later sequence: above the truth
    policy._queued["q"] = above
    policy._heap[policy._heap.index(old)] = above
    message = policy.checks().check(ready, evictable)
    assert message == f"EvictableSetInv: 'q''s heap item {above} is not a lower bound"


def test_gdsf_the_heap_and_its_index_must_hold_the_same_items() -> None:
    policy, ready, evictable = _gdsf()
    message = "EvictableSetInv: the heap and its index of queued items disagree"
    # The same number of items, but the index points at an equal copy, not the heap's.
    prio, seq, key = policy._queued["q"]
    policy._queued["q"] = (prio, seq, key)
    assert policy.checks().check(ready, evictable) == message
    # An extra heap item the index does not know.
    policy, ready, evictable = _gdsf()
    policy._heap.append((1 << 62, 0, "ghost"))
    assert policy.checks().check(ready, evictable) == message


# ---------------------------------------------------------------- s3fifo


def _s3fifo() -> tuple[S3FifoPolicy, dict[str, int], dict[str, int]]:
    policy, ready, evictable = _checked("s3fifo")
    assert isinstance(policy, S3FifoPolicy)
    assert list(policy.small) == ["r", "q"] and not policy.main
    return policy, ready, evictable


def test_s3fifo_a_key_in_both_queues_is_reported() -> None:
    policy, ready, evictable = _s3fifo()
    policy.main["q"] = 1
    assert policy.checks().check(ready, evictable) == "EvictableSetInv: ['q'] in both S and M"


def test_s3fifo_the_queues_must_hold_exactly_the_evictable_keys() -> None:
    policy, ready, _ = _s3fifo()
    assert policy.checks().check(ready, {"q": 1, "z": 3}) == (
        "EvictableSetInv: queues hold ['q', 'r'], evictable ['q', 'z']"
    )


def test_s3fifo_reports_counters_kept_for_the_wrong_keys() -> None:
    policy, ready, evictable = _s3fifo()
    del policy.freq["p"]
    assert policy.checks().check(ready, evictable) == (
        "EvictableSetInv: counters kept for ['q', 'r'], ready keys ['p', 'q', 'r']"
    )


def test_s3fifo_a_key_in_s_must_be_homed_in_s() -> None:
    policy, ready, evictable = _s3fifo()
    policy.home["q"] = "M"
    assert policy.checks().check(ready, evictable) == "EvictableSetInv: 'q' is in S but homed in M"


def test_s3fifo_a_key_in_m_must_be_homed_in_m() -> None:
    policy, ready, evictable = _s3fifo()
    policy.small_blocks -= policy.small.pop("q")
    policy.main["q"] = 1
    assert policy.checks().check(ready, evictable) == "EvictableSetInv: 'q' is in M but homed in S"


@pytest.mark.parametrize(("count", "ok"), [(-1, False), (0, True), (3, True), (4, False)])
def test_s3fifo_counters_must_lie_in_zero_to_three(count: int, ok: bool) -> None:
    policy, ready, evictable = _s3fifo()
    policy.freq["p"] = count
    message = policy.checks().check(ready, evictable)
    if ok:
        assert message is None
    else:
        assert message is not None and message.startswith("PolicyTypeOK: a counter is outside 0..3")


def test_s3fifo_the_small_block_count_is_what_s_holds() -> None:
    policy, ready, evictable = _s3fifo()
    policy.small_blocks += 1
    message = policy.checks().check(ready, evictable)
    assert message == "EvictableSetInv: small_blocks is 4, S holds 3"


def test_s3fifo_a_live_key_must_not_be_in_the_ghost() -> None:
    policy, ready, evictable = _s3fifo()
    policy.ghost["n"] = 1
    policy.ghost_blocks += 1
    assert policy.checks().check(ready, evictable) == "EvictableSetInv: live keys ['n'] are in G"


def test_s3fifo_the_ghost_weight_is_its_keys_and_within_capacity() -> None:
    policy, ready, evictable = _s3fifo()
    capacity = policy.ghost_capacity
    policy.ghost["gone"] = 1  # not counted in ghost_blocks
    message = f"EvictableSetInv: G weighs 0, capacity {capacity}"
    assert policy.checks().check(ready, evictable) == message
    policy.ghost["gone"] = capacity  # counted, and exactly at capacity: fine
    policy.ghost_blocks = capacity
    assert policy.checks().check(ready, evictable) is None
    policy.ghost["gone"] = capacity + 1  # one over
    policy.ghost_blocks = capacity + 1
    message = f"EvictableSetInv: G weighs {capacity + 1}, capacity {capacity}"
    assert policy.checks().check(ready, evictable) == message
