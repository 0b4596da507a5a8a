"""ExtentPool: the extent allocator keeps every id exactly once and hands out runs."""

from __future__ import annotations

from free_pools import pool_with_extents
from hypothesis import given, settings
from hypothesis import strategies as st

from embedding_cache.extent_pool import ExtentPool
from embedding_cache.free_stack import FreeStack
from embedding_cache.runs import runs_of, size_class
from embedding_cache.tracked_extent_pool import TrackedExtentPool


def test_runs_of() -> None:
    assert runs_of(()) == []
    assert runs_of((4, 5, 6)) == [(4, 7)]
    assert runs_of((1, 3, 4, 9)) == [(1, 2), (3, 5), (9, 10)]


def test_size_class() -> None:
    assert [size_class(n) for n in (1, 2, 3, 4, 7, 8)] == [0, 1, 1, 2, 2, 3]


def test_fresh_pool_is_one_extent_and_allocates_runs_from_its_back() -> None:
    fb = ExtentPool(10)
    assert len(fb) == 10 and fb.extents() == [(0, 10)]
    assert fb.take(3) == (7, 8, 9)
    assert fb.take(4) == (3, 4, 5, 6)
    assert fb.extents() == [(0, 3)]
    assert fb.take(0) == ()


def test_give_coalesces_both_neighbours() -> None:
    fb = ExtentPool(9)
    a, b, c = fb.take(3), fb.take(3), fb.take(3)
    fb.give(a)
    fb.give(c)
    assert fb.extents() == [(0, 3), (6, 9)]
    fb.give(b)
    assert fb.extents() == [(0, 9)]


def test_fragmented_take_gathers_largest_extents_first_ascending() -> None:
    fb = ExtentPool(12)
    parts = [fb.take(2) for _ in range(6)]
    for p in parts[::2]:  # free every other pair: extents of 2, none adjacent
        fb.give(p)
    ids = fb.take(5)
    assert ids == tuple(sorted(ids)) and len(set(ids)) == 5
    assert len(runs_of(ids)) == 3
    assert len(fb) == 1


def test_prefers_the_smallest_class_that_fits_whole() -> None:
    fb = ExtentPool(20)
    a, _gap, b = fb.take(3), fb.take(1), fb.take(8)  # (17..19), (16), (8..15)
    fb.give(a)
    fb.give(b)  # extents: [0, 16) merged with b, and [17, 20)
    assert fb.extents() == [(0, 16), (17, 20)]
    assert fb.take(2) == (18, 19)  # class 1 ([2, 4)) fits 2 whole
    assert fb.take(5) == (11, 12, 13, 14, 15)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 64),
    script=st.lists(st.tuples(st.booleans(), st.integers(0, 70)), max_size=60),
)
def test_every_id_stays_free_or_owned_exactly_once(n: int, script: list[tuple[bool, int]]) -> None:
    fb = TrackedExtentPool(n)
    owned: list[tuple[int, ...]] = []
    for is_take, arg in script:
        if is_take and arg <= len(fb):
            ids = fb.take(arg)
            assert len(ids) == arg and list(ids) == sorted(set(ids))
            plan = fb.copy()
            owned.append(ids)
            assert len(plan) == len(fb)
        elif owned:
            fb.give(owned.pop(arg % len(owned)))
        every = sorted([*fb, *(b for ids in owned for b in ids)])
        assert all(fb.just_freed(ids) is False or not ids for ids in owned)
        assert every == list(range(n))
        assert sum(b - a for a, b in fb.extents()) == len(fb)
        assert fb.check() is None  # the index agrees with the extents
        # extents are maximal: no two touch
        ext = fb.extents()
        assert all(ext[i][1] < ext[i + 1][0] for i in range(len(ext) - 1))


def test_plan_take_predicts_take_without_changing_anything() -> None:
    fb = TrackedExtentPool(16)
    x, y, z = fb.take(4), fb.take(4), fb.take(4)
    fb.give(y)
    before = fb.extents()
    predicted = fb.plan_take(6, [x])
    assert fb.extents() == before
    fb.give(x)
    assert fb.just_freed(x) and not fb.just_freed(z)
    assert fb.take(6) == predicted
    assert z == (4, 5, 6, 7)


def test_free_stack_is_the_seeds_lifo() -> None:
    st_ = FreeStack(range(6))
    assert st_.take(2) == (4, 5)
    st_.give((4, 5))
    assert st_.just_freed((4, 5))
    assert st_.plan_take(3, [(9,)]) == (4, 5, 9)
    assert st_.take(3) == (3, 4, 5)


# -- bounded best fit ------------------------------------------------------------------


def test_the_shortest_fitting_extent_of_the_own_class_is_cut() -> None:
    fb, extents = pool_with_extents([7, 6, 5])  # all of class 2
    assert fb.take(5) == extents[2]  # exact fit
    fb, extents = pool_with_extents([7, 6, 4])
    assert fb.take(5) == extents[1][-5:]  # 6 is the shortest that holds 5
    assert fb.extents()[0] == (extents[0][0], extents[0][-1] + 1)  # the 7 stays whole


def test_above_its_own_class_the_shortest_extent_is_cut() -> None:
    fb, extents = pool_with_extents([15, 9, 12])  # class 3: every one holds 3
    assert fb.take(3) == extents[1][-3:]


def test_gathering_takes_the_longest_whole_then_the_best_fit_for_the_rest() -> None:
    fb, extents = pool_with_extents([3, 5, 2])  # no extent holds 7
    got = fb.take(7)
    assert got == tuple(sorted(extents[1] + extents[2]))  # 5 whole, then the 2 fits exactly
    assert [b - a for a, b in fb.extents()] == [3]  # the 3 stays whole


def test_taking_nothing_changes_nothing() -> None:
    fb, _ = pool_with_extents([1, 3])
    before = fb.extents()
    assert fb.take(0) == () and fb.extents() == before and len(fb) == 4
    empty = ExtentPool(3)
    empty.take(3)  # no extent left: taking nothing must not look for the longest one
    assert empty.take(0) == () and empty.extents() == [] and len(empty) == 0


def test_above_its_own_class_the_smallest_class_is_cut_not_the_largest() -> None:
    fb, extents = pool_with_extents([40, 9, 20])  # classes 5, 3, 4; none of class 1
    assert fb.take(3) == extents[1][-3:]


def test_of_equally_short_extents_the_most_recently_freed_is_cut() -> None:
    fb, extents = pool_with_extents([7, 6, 6])
    assert fb.take(5) == extents[2][-5:]
    fb, extents = pool_with_extents([13, 10, 10])
    assert fb.take(3) == extents[2][-3:]


def test_plan_take_gives_the_victims_back_in_their_order() -> None:
    # Found by the checked build's alloc contract (HeldBlocksStableProp) at 64 blocks:
    # victims that merge into extents of one length leave best fit a tie, and which of
    # them it cuts depends on the order they were freed in (the most recent). The alloc
    # gives them back victim by victim, so plan_take must too; giving them all at once,
    # sorted, picks the other.
    fb = TrackedExtentPool(20)
    fb.take(20)
    victims = [(10, 11, 12), (2, 3, 4)]
    predicted = fb.plan_take(3, victims)
    at_once = fb.copy()
    at_once.give(sorted(b for ids in victims for b in ids))
    assert at_once.take(3) != predicted  # the order matters here
    for ids in victims:
        fb.give(ids)
    assert fb.take(3) == predicted == (2, 3, 4)
