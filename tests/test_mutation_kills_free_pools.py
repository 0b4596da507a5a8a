"""The free pools' smaller promises: repr, the list-style alias, ``just_freed``
tracked (the membership map follows every change, also for pools longer than
one fill slice, also in a copy; a cache's extents are tracked exactly in the
checked builds) and untracked, the first fit within a size class and its
bound, and independent copies.

Found by mutation testing (mutation/SURVIVORS.md): the cache's tests run the
extents pool tracked (the checked build) and never print it, fit a take
within its own size class, scan a long one, or copy a stack.
"""

from __future__ import annotations

import random

import pytest
from free_pools import pool_with_extents

from embedding_cache import CHECKED
from embedding_cache.allocators import make_free_pool
from embedding_cache.extent_index import EXACT_LENGTHS, FIT_SCAN
from embedding_cache.extent_pool import ExtentPool
from embedding_cache.free_stack import FreeStack
from embedding_cache.tracked_extent_pool import TrackedExtentPool


def _map_agrees(fb: ExtentPool, num_blocks: int) -> None:
    """A tracked pool's membership map says free exactly for the ids its extents hold,
    and never for an id outside the pool."""
    free = set(fb)
    for i in range(-1, num_blocks + 2):
        assert fb.just_freed((i,)) == (i in free), f"id {i}: map and extents disagree"


def test_the_repr_shows_the_count_and_at_most_eight_extents() -> None:
    fb = ExtentPool(6)
    assert repr(fb) == "ExtentPool(6 free: 0..5)"
    fb = ExtentPool(40)
    taken = fb.take(40)
    fb.give(taken[0::2])  # 20 single-id extents: 0, 2, 4, ...
    assert repr(fb) == (
        "ExtentPool(20 free: 0..0, 2..2, 4..4, 6..6, 8..8, 10..10, 12..12, 14..14, ...)"
    )


def test_the_repr_elides_from_the_ninth_extent_on() -> None:
    def pool_of_single_extents(count: int) -> ExtentPool:
        fb = ExtentPool(2 * count)
        fb.give(fb.take(2 * count)[0::2])  # ids 0, 2, 4, ...: one extent each
        return fb

    eight = ", ".join(f"{i}..{i}" for i in range(0, 16, 2))
    assert repr(pool_of_single_extents(8)) == f"ExtentPool(8 free: {eight})"
    assert repr(pool_of_single_extents(9)) == f"ExtentPool(9 free: {eight}, ...)"


def test_extend_is_give() -> None:
    fb = ExtentPool(8)
    ids = fb.take(3)
    fb.extend(ids)
    assert len(fb) == 8 and fb.extents() == [(0, 8)]


def test_untracked_just_freed_only_counts() -> None:
    fb = ExtentPool(8)  # track=False: no membership map
    ids = fb.take(3)
    assert fb.just_freed(ids)  # 5 free ids cover any 3 ids...
    assert not fb.just_freed(tuple(range(6)))  # ...but not 6
    fb.give(ids)
    assert fb.just_freed(ids) and fb.just_freed(tuple(range(8)))


def test_tracked_just_freed_knows_which_ids_are_free() -> None:
    fb = TrackedExtentPool(8)
    ids = fb.take(3)
    assert not fb.just_freed(ids) and fb.just_freed((0, 1))
    assert not fb.just_freed((-1,)) and not fb.just_freed((8,))
    fb.give(ids)
    assert fb.just_freed(ids)


@pytest.mark.parametrize("seed", range(3))
def test_the_tracked_map_follows_every_take_and_give(seed: int) -> None:
    rng = random.Random(seed)
    fb = TrackedExtentPool(24)
    owned: list[tuple[int, ...]] = []
    for _ in range(60):
        if owned and (rng.random() < 0.5 or not len(fb)):
            fb.give(owned.pop(rng.randrange(len(owned))))
        else:
            owned.append(fb.take(rng.randint(1, len(fb))))
        _map_agrees(fb, 24)


def test_the_tracked_map_of_a_pool_longer_than_one_fill_slice() -> None:
    fb = TrackedExtentPool(5000)  # marking 5000 ids free takes more than one 4096-byte slice
    _map_agrees(fb, 5000)
    ids = fb.take(4500)
    fb.give(ids)
    _map_agrees(fb, 5000)


def test_a_copy_keeps_tracking_exactly() -> None:
    fb = TrackedExtentPool(8)
    taken = fb.take(3)
    twin = fb.copy()
    assert not twin.just_freed(taken)  # 5 ids are free, but not these
    _map_agrees(twin, 8)
    twin.give(taken)
    _map_agrees(twin, 8)
    _map_agrees(fb, 8)  # the original is untouched
    assert not fb.just_freed(taken)


#: Extents this long are indexed by size class (13: 8,192 .. 16,383), where best fit is
#: bounded to FIT_SCAN extents; shorter ones by exact length.
BIG = 2 * EXACT_LENGTHS


def _own_class_pool(fits_at: int, *, longer: int = 0) -> tuple[ExtentPool, tuple[int, ...]]:
    """Free extents of BIG ids, with one of BIG + 1 ids (the same size class) the
    ``fits_at``-th that the class's bounded scan meets (it meets the most recently
    freed first); and, when ``longer``, one extent of that many ids freed first."""
    scan_order = [BIG] * fits_at + [BIG + 1]
    fb, extents = pool_with_extents(([longer] if longer else []) + scan_order[::-1])
    return fb, extents[1 if longer else 0]


@pytest.mark.parametrize("fits_at", [0, 1, FIT_SCAN - 1])
def test_a_take_fits_whole_in_a_long_enough_extent_of_its_own_class(fits_at: int) -> None:
    fb, fitting = _own_class_pool(fits_at)
    assert fb.take(BIG + 1) == fitting


def test_the_own_class_scan_gives_up_after_fit_scan_extents_when_a_longer_class_is_free() -> None:
    # The one extent of its class that fits is the (FIT_SCAN + 1)th the bounded scan
    # meets: it does not reach it, and cuts the ids from the extent of the class above.
    fb, fitting = _own_class_pool(FIT_SCAN, longer=2 * BIG)
    longer = fb.extents()[0]
    assert longer[1] - longer[0] == 2 * BIG
    got = fb.take(BIG + 1)
    assert got != fitting and set(got) <= set(range(*longer))
    assert len(fb) == FIT_SCAN * BIG + (BIG + 1) + 2 * BIG - (BIG + 1)


def test_the_own_class_scan_looks_at_all_of_it_when_no_longer_class_is_free() -> None:
    # No class above: the bounded scan would miss the fitting extent and split the ids
    # over several runs, so the last class is scanned whole (has_run is exact).
    fb, fitting = _own_class_pool(FIT_SCAN)
    assert fb.has_run(BIG + 1) and not fb.has_run(BIG + 2)
    assert fb.take(BIG + 1) == fitting
    assert len(fb) == FIT_SCAN * BIG


def test_the_extents_pool_tracks_membership_exactly_in_the_checked_builds() -> None:
    pool = make_free_pool("extents", 4)
    assert isinstance(pool, ExtentPool)
    taken = pool.take(1)
    # Exact (checked builds): a taken id is not free. Untracked (default build): only
    # the count is checked, and 3 free ids cover 1.
    assert pool.just_freed(taken) is (not CHECKED)


def test_the_stack_has_just_freed_only_what_is_on_its_top() -> None:
    stack = FreeStack(range(6))
    assert stack.just_freed(()) and stack.just_freed((4, 5)) and stack.just_freed((5,))
    assert not stack.just_freed((3, 4)) and not stack.just_freed((5, 4))


def test_a_copied_stack_is_independent() -> None:
    stack = FreeStack(range(5))
    twin = stack.copy()
    assert type(twin) is FreeStack and twin == stack
    assert twin.take(2) == (3, 4)
    assert list(stack) == [0, 1, 2, 3, 4]


def test_an_empty_stack_has_a_run_of_zero_ids_and_takes_it() -> None:
    """HasRun(0) holds on any pool, an empty one too: ``take_run(0)`` gives (), not None
    (``if n < 0`` would search the empty stack and find nothing)."""
    stack = FreeStack()
    assert stack.has_run(0) and stack.take_run(0) == () and stack == []
    assert stack.take_run(1) is None
