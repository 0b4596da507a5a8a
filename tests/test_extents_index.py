"""The extents pool's index above the exact lengths, its stale entries and its rebuild.

Extents longer than ``EXACT_LENGTHS`` sit on the stack of their power-of-two size
class; best fit there is bounded to ``FIT_SCAN`` live entries per class, stale
entries (an extent since merged, cut or taken) are dropped when met, and the
index is rebuilt once stale entries outnumber the extents. Each test names the
rule of ``embedding_cache.extent_pool`` it holds, and checks the pool's own
consistency (``ExtentPool.check``: bits, stacks, extents) after every change.

Found by mutation testing (mutation/SURVIVORS.md): the cache's tests never gather
an alloc from size-class extents, meet a stale class entry, fit a take within the
scan bound when a longer class is free, or run long enough to rebuild the index.
"""

from __future__ import annotations

import random

import pytest
from free_pools import pool_with_extents

from embedding_cache.extent_index import COMPACT_SLACK, EXACT_LENGTHS, FIT_SCAN
from embedding_cache.extent_pool import ExtentPool
from embedding_cache.free_stack import FreeStack
from embedding_cache.runs import runs_of
from embedding_cache.tracked_extent_pool import TrackedExtentPool

#: One size class up from the exact lengths (class 13: 8,192 .. 16,383 ids).
BIG = 2 * EXACT_LENGTHS


def _ok(fb: ExtentPool) -> None:
    assert fb.check() is None, fb.check()


def _index_entries(fb: ExtentPool) -> int:
    """How many entries, live or stale, the index holds."""
    stacks = [*fb._exact.values(), *fb._classes.values()]
    return sum(len(stack) for stack in stacks)


# ---------------------------------------------------------------- gathering pieces


def test_gathering_pops_the_longest_size_class_extents_whole() -> None:
    # Classes 12, 13, 14; no extent holds 30,000: the 20,000 and the 9,000 go whole
    # (longest first), and the last 1,000 are cut from the back of the 5,000.
    fb, (small, middle, large) = pool_with_extents([5000, 9000, 20000])
    got = fb.take(30000)
    assert got == tuple(sorted(small[-1000:] + middle + large))
    assert fb.extents() == [(small[0], small[0] + 4000)] and len(fb) == 4000
    _ok(fb)


def test_gathering_skips_class_entries_gone_stale_by_a_merge() -> None:
    # Freeing the id between the 8,000 and the 9,000 merges them into one extent of
    # 17,001 (class 14): the two old entries (classes 12 and 13) go stale, one of them
    # at an id that no longer begins an extent. They are dropped, never taken.
    fb, (left, right, three, two) = pool_with_extents([8000, 9000, 3000, 2000])
    fb.give((left[-1] + 1,))
    _ok(fb)
    assert fb.extents()[0] == (left[0], right[-1] + 1)
    everything = tuple(sorted((*left, left[-1] + 1, *right, *three, *two)))
    assert fb.take(len(fb)) == everything
    assert len(fb) == 0
    _ok(fb)


def test_gathering_skips_an_entry_whose_extent_was_cut_to_an_exact_length() -> None:
    # Two class-12 extents; taking 904 cuts the 5,000 (the shorter that holds it) to
    # 4,096 ids, exactly the longest exact length: its class entry goes stale. No
    # extent holds 6,100, so the 6,000 goes whole and the rest comes from the 4,096.
    fb, (six, five) = pool_with_extents([6000, 5000])
    assert fb.take(904) == five[-904:]
    _ok(fb)
    got = fb.take(6100)
    assert got == tuple(sorted(six + five[4096 - 100 : 4096]))
    _ok(fb)


# ---------------------------------------------------------------- the bounded scan


def _class_pool(
    scan_order: list[int], *, longer: int = 0
) -> tuple[ExtentPool, list[tuple[int, ...]]]:
    """Extents of ``scan_order``'s lengths in the order a class scan meets them (the most
    recently freed first), and, when ``longer``, one extent that long freed before them;
    each extent's ids in scan order (then the longer one's)."""
    lengths = ([longer] if longer else []) + scan_order[::-1]
    fb, extents = pool_with_extents(lengths)
    met = extents[1:] if longer else extents
    return fb, met[::-1] + (extents[:1] if longer else [])


@pytest.mark.parametrize("longer", [0, 2 * BIG])
def test_the_last_extent_within_the_scan_bound_is_found(longer: int) -> None:
    # The only fitting extent is the FIT_SCAN-th the scan meets: found, also when a
    # longer class could have served.
    fb, extents = _class_pool([BIG] * (FIT_SCAN - 1) + [BIG + 1], longer=longer)
    assert fb.take(BIG + 1) == extents[FIT_SCAN - 1]
    _ok(fb)


def test_a_fit_met_before_the_bound_is_kept_when_the_bound_is_reached() -> None:
    # The first extent met holds n (not exactly); the FIT_SCAN - 1 after it do not.
    # The scan stops at its bound with that fit: the longer class is not used.
    fb, extents = _class_pool([BIG + 2] + [BIG] * (FIT_SCAN - 1) + [BIG + 1], longer=2 * BIG)
    assert fb.take(BIG + 1) == extents[0][-(BIG + 1) :]
    _ok(fb)


def test_the_shortest_fit_within_the_bound_is_cut() -> None:
    fb, extents = _class_pool([BIG + 3, BIG + 2, BIG + 4], longer=2 * BIG)
    assert fb.take(BIG + 1) == extents[1][-(BIG + 1) :]
    _ok(fb)


def test_of_equal_fits_in_a_class_the_first_met_is_cut() -> None:
    fb, extents = _class_pool([BIG + 2, BIG + 2], longer=2 * BIG)
    assert fb.take(BIG + 1) == extents[0][-(BIG + 1) :]
    _ok(fb)


def test_the_scan_passes_a_stale_entry_between_live_ones() -> None:
    # Freeing the id between the 100 and the last BIG merges them (BIG + 101, class 13,
    # on top of its stack); the BIG's own entry goes stale under it. The scan meets,
    # top first: the merged extent (fits), the stale entry, a BIG (does not fit), and
    # the BIG + 2 (fits best): it passes the stale entry and cuts the BIG + 2.
    fb, (best, _, hundred, _) = pool_with_extents([BIG + 2, BIG, 100, BIG])
    fb.give((hundred[-1] + 1,))
    _ok(fb)
    assert fb.take(BIG + 1) == best[-(BIG + 1) :]
    _ok(fb)


def test_the_first_longer_class_is_scanned_within_the_bound() -> None:
    # No extent of n's class; the class above holds FIT_SCAN + 1 extents, the shortest
    # freed first (the last a scan meets): best fit among the FIT_SCAN met, not it.
    lengths = [2 * BIG + 1] + [2 * BIG + 3] * (FIT_SCAN - 1) + [2 * BIG + 2]
    fb, extents = pool_with_extents(lengths)
    assert fb.take(BIG + 1) == extents[-1][-(BIG + 1) :]
    _ok(fb)


def test_an_own_class_fit_wins_over_a_longer_class() -> None:
    fb, extents = _class_pool([BIG + 1], longer=2 * BIG)
    assert fb.take(BIG + 1) == extents[0]
    _ok(fb)


def test_a_longer_class_gone_stale_is_passed_for_the_next() -> None:
    # n is of class 12; class 13's only entry went stale (its extent was cut to an
    # exact length), so best fit goes on to class 14.
    fb, (thirteen, fourteen) = pool_with_extents([BIG + 100, 4 * BIG])
    assert fb.take(BIG + 100 - 4000) == thirteen[4000:]  # class 13's best fit: cut to 4,000
    _ok(fb)
    assert fb.take(5000) == fourteen[-5000:]
    _ok(fb)


def test_has_run_of_one_needs_a_free_id() -> None:
    fb = ExtentPool(2)
    assert fb.has_run(1) and fb.has_run(0)
    fb.take(2)
    assert not fb.has_run(1) and fb.has_run(0)
    assert not ExtentPool(0).has_run(1)


# ---------------------------------------------------------------- the rebuild


def _rebuilt(fb: ExtentPool) -> None:
    """Rebuild ``fb``'s index: one live entry per extent, bits exact, the next rebuild
    due at twice the extents plus slack."""
    fb._compact()
    assert _index_entries(fb) == len(fb.extents())
    assert fb._compact_at == 2 * len(fb.extents()) + COMPACT_SLACK
    _ok(fb)


def test_a_rebuild_leaves_one_live_entry_per_extent() -> None:
    fb, (three, *_) = pool_with_extents([3, 7, 5000, 9000, 2])
    fb.take(4500)  # cuts the 5,000 (class 12) to 500: its class entry goes stale
    fb.give((three[-1] + 1,))  # merges the 3 and the 7: both their entries go stale
    assert _index_entries(fb) > len(fb.extents())
    _rebuilt(fb)


def test_a_rebuild_keeps_a_live_entry_under_a_stale_one() -> None:
    fb, (_, second, _) = pool_with_extents([5, 5, 1])
    fb.give((second[-1] + 1,))  # the second 5 merges into a 7: its entry, on top, is stale
    _rebuilt(fb)
    fb, (_, second, _) = pool_with_extents([5, 5, 5])
    fb.give((second[-1] + 1,))  # the third 5's start is no extent's now: on top, stale
    _rebuilt(fb)


def test_a_rebuild_drops_class_entries_of_extents_cut_into_another_class() -> None:
    fb, _ = pool_with_extents([3, 9000])
    fb.take(4000)  # the 9,000 (class 13) is cut to 5,000 (class 12)
    _rebuilt(fb)
    fb, _ = pool_with_extents([3, 5000])
    fb.take(904)  # the 5,000 (class 12) is cut to 4,096: an exact length
    _rebuilt(fb)


def test_a_rebuild_keeps_one_of_a_starts_entries() -> None:
    fb, _ = pool_with_extents([3, 12000])
    fb.take(1000)  # 12,000 cut to 11,000: the same start, the same class, pushed again
    assert _index_entries(fb) > len(fb.extents())
    _rebuilt(fb)


def test_the_index_stays_within_twice_the_extents_plus_slack() -> None:
    # O(1) amortized: stale entries are bounded by the rebuild, however long the run.
    rng = random.Random(7)
    fb = ExtentPool(3 * BIG)
    held: list[tuple[int, ...]] = []
    rebuilt = 0
    for _ in range(2000):
        if held and (rng.random() < 0.5 or len(fb) < 8):
            fb.give(held.pop(rng.randrange(len(held))))
        else:
            held.append(fb.take(rng.choice([1, 3, 40, 700, 5000, BIG + 3]) % (len(fb) + 1)))
        rebuilt += fb._pushes == 0 or _index_entries(fb) == len(fb.extents())
        assert _index_entries(fb) <= 2 * fb._compact_at + 2
        assert fb._pushes <= fb._compact_at
    _ok(fb)
    assert rebuilt > 0


# ---------------------------------------------------------------- runs, merges, self-check


def _naive_runs(ids: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for b in ids:
        if runs and runs[-1][1] == b:
            runs[-1] = (runs[-1][0], b + 1)
        else:
            runs.append((b, b + 1))
    return runs


@pytest.mark.parametrize("seed", range(40))
def test_runs_of_long_entries_is_the_walk(seed: int) -> None:
    # Above WALK_LIMIT ids runs_of gallops along each run and bisects its end: the
    # same runs as a walk, for runs of every length (1 id to hundreds, first and last).
    rng = random.Random(seed)
    ids: list[int] = []
    at = rng.randrange(3)
    while len(ids) < rng.choice([65, 100, 300, 1000]):
        length = rng.choice([1, 1, 2, 3, 7, 31, 64, 65, 200])
        ids.extend(range(at, at + length))
        at += length + rng.choice([1, 2, 50])
    assert runs_of(ids) == _naive_runs(ids)
    assert runs_of(ids[1:]) == _naive_runs(ids[1:])


def test_runs_of_one_long_run_not_from_zero() -> None:
    assert runs_of(list(range(5, 105))) == [(5, 105)]
    assert runs_of(list(range(0, 100))) == [(0, 100)]
    assert runs_of([*range(0, 99), 100]) == [(0, 99), (100, 101)]


def test_give_returns_the_longest_extent_it_made() -> None:
    fb, (a, b, c) = pool_with_extents([3, 4, 5])
    fb.take(len(fb))
    assert fb.give(()) == 0
    assert fb.give(a) == 3
    assert fb.give(b) == 4  # one used id apart from a
    assert fb.give((b[0] - 1,)) == 8  # that id joins them: 3 + 1 + 4
    assert fb.give(c[1:3]) == 2  # touching nothing free
    assert fb.give((c[0], c[3])) == 4  # two runs, each merging: 3, then 4 (not the old 8)
    _ok(fb)


def test_check_names_each_kind_of_damage() -> None:
    def damaged(how: str) -> str | None:
        fb, _ = pool_with_extents([3, 5000, 4])
        start, end = fb.extents()[1]
        if how == "mirror":
            fb._by_end[end + 100] = fb._by_end.pop(end)
        elif how == "overlap":
            fb._by_start[start + 1] = end + 1
            fb._by_end[end + 1] = start + 1
        elif how == "touch":
            first_end = fb.extents()[0][1]
            fb._by_start[first_end] = first_end + 1
            fb._by_end[first_end + 1] = first_end
            fb._count += 1
        elif how == "unindexed":
            fb._classes.clear()
        elif how == "unindexed exact":
            fb._exact[3].clear()
        elif how == "length never indexed":
            del fb._exact[3]
        elif how == "negative start":
            first_start, first_end = fb.extents()[0]
            del fb._by_start[first_start], fb._by_end[first_end]
            fb._by_start[-1] = first_end
            fb._by_end[first_end] = -1
            fb._count += 1
        elif how == "empty extent":
            past = len(fb._ids)  # after every extent: only its emptiness is wrong
            fb._by_start[past] = past
            fb._by_end[past] = past
        elif how == "count":
            fb._count += 1
        elif how == "length bit":
            fb._lengths |= 1 << 9
        elif how == "class bit":
            fb._class_mask |= 1 << 20
        elif how == "class bit of an empty stack":
            fb._classes[20] = []
            fb._class_mask |= 1 << 20
        return fb.check()

    assert pool_with_extents([3, 5000, 4])[0].check() is None
    expected = {
        "mirror": "the extents by end do not mirror the extents by start",
        "overlap": "overlaps, touches or leaves the pool",
        "touch": "overlaps, touches or leaves the pool",
        "unindexed": "is not on its size class's stack",
        "unindexed exact": "is not on its length's stack",
        "length never indexed": "is not on its length's stack",
        "negative start": "overlaps, touches or leaves the pool",
        "empty extent": "overlaps, touches or leaves the pool",
        "count": "is not the extents' total",
        "length bit": "the length bits disagree with the length stacks",
        "class bit": "the size class bits disagree with the size class stacks",
        "class bit of an empty stack": "the size class bits disagree with the size class stacks",
    }
    whole = {"mirror", "length bit", "class bit", "class bit of an empty stack"}
    for how, message in expected.items():
        found = damaged(how)
        assert found is not None and message in found, (how, found)
        assert how not in whole or found == message, (how, found)


def test_the_tracked_check_adds_the_membership_map() -> None:
    fb = TrackedExtentPool(10)
    fb.take(4)
    assert fb.check() is None
    fb._map[9] = 1  # a taken id (4 are taken from the back) marked free
    assert fb.check() == "the membership map disagrees with the extents"
    fb = TrackedExtentPool(10)
    fb._count += 1  # the extents' own damage is reported first
    assert fb.check() == "the free count 11 is not the extents' total"


def test_has_run_passes_a_longer_length_gone_stale() -> None:
    # Extents of 10, 20 and 3; freeing the id between the 20 and the 3 merges them (24),
    # whose taking leaves length 20's stack (and 3's) holding stale entries only. A run
    # of 8 is still free (the 10); one of 11 is not, and the stale bits are cleared.
    fb, (_, twenty, three) = pool_with_extents([10, 20, 3])
    fb.give((twenty[-1] + 1,))
    assert fb.take(24) == (*twenty, twenty[-1] + 1, *three)
    assert fb._lengths >> 20 & 1  # the stale entry's bit
    assert fb.has_run(8) and fb.has_run(10)
    _ok(fb)
    assert not fb.has_run(11)
    _ok(fb)
    assert fb._lengths >> 11 == 0


def test_has_run_of_the_longest_exact_length() -> None:
    assert ExtentPool(EXACT_LENGTHS).has_run(EXACT_LENGTHS)
    assert not ExtentPool(EXACT_LENGTHS).has_run(EXACT_LENGTHS + 1)


def test_an_empty_pool_has_no_ids() -> None:
    assert len(ExtentPool(0)) == 0 and ExtentPool(0).extents() == []
    _ok(ExtentPool(0))


def test_the_stack_finds_runs_anywhere_in_its_order() -> None:
    stack = FreeStack([9, 3, 4, 0, 5, 1])  # runs 0..1, 3..5, 9
    assert stack.has_run(0) and stack.has_run(1) and stack.has_run(3)
    assert not stack.has_run(4)
    assert FreeStack([0]).has_run(1) and not FreeStack([]).has_run(1)
    assert FreeStack([2, 1]).has_run(2) and not FreeStack([3, 1]).has_run(2)


def test_the_stack_takes_a_run_from_anywhere_in_its_order() -> None:
    """``take_run`` (the ``FreePool`` protocol's, so no caller casts): the lowest run
    that holds n, the other ids left in their stack order; None changes nothing."""
    stack = FreeStack([9, 3, 4, 0, 5, 1])  # runs 0..1, 3..5, 9
    assert stack.take_run(4) is None and stack == [9, 3, 4, 0, 5, 1]
    assert stack.take_run(2) == (0, 1) and stack == [9, 3, 4, 5]
    assert stack.take_run(2) == (3, 4) and stack == [9, 5]
    assert stack.take_run(0) == () and stack.take_run(1) == (5,) and stack == [9]
    assert stack.give((1, 2)) is None  # it keeps no runs: nothing to report


def test_taking_one_or_none_from_either_pool() -> None:
    stack = FreeStack(range(4))
    assert stack.take(0) == () and stack.plan_take(0, ()) == () and len(stack) == 4
    assert stack.take(1) == (3,) and stack.plan_take(1, ()) == (2,)
    fb = ExtentPool(4)
    assert fb.take_run(0) == () and fb.take(1) == (3,) and len(fb) == 3
    fb.take(3)
    assert fb.take_run(0) == () and ExtentPool(0).take_run(0) == ()


def test_a_rebuild_keeps_the_most_recently_indexed_first_among_equals() -> None:
    # An 11 freed before a 5; taking 6 cuts the 11 to 5, indexed after the other 5.
    # Among the two 5s the cut one is the most recently indexed: cut first, before and
    # after a rebuild (which once re-indexed in the extents' dict order, where the cut
    # one keeps the place its start took when first freed).
    for rebuild in (False, True):
        fb, (eleven, _) = pool_with_extents([11, 5])
        assert fb.take(6) == eleven[-6:]
        if rebuild:
            fb._compact()
            _ok(fb)
        assert fb.take(5) == eleven[:5], rebuild
