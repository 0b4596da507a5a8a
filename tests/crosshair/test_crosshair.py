"""CrossHair checks the transitions' contracts, and is shown to catch planted bugs.

The CrossHair runs are marked ``slow`` (about 1.5 min together on 2 cores):
the clean transitions yield no counterexample on any condition, and every
planted divergence in ``embedding_cache.verify.planted`` yields one naming a
condition it is expected to break. The fast tests check what those runs rest
on: the state factory builds only well-formed states and reaches every
reachable small state (up to key names and free-stack order), and the
documented raises CrossHair accepts are the ones the docstrings list.
"""

from __future__ import annotations

import itertools
import os
import random
import subprocess
import sys

import pytest

from embedding_cache import errors, invariants, transitions
from embedding_cache.state import CacheState
from embedding_cache.verify import planted
from embedding_cache.verify.crosshair_check import (
    CLEAN_TARGETS,
    CrosshairResult,
    run_crosshair,
)
from embedding_cache.verify.crosshair_plugin import (
    MAX_BLOCKS,
    MAX_ENTRIES,
    MAX_PIN,
    build_state,
    documented_raises,
)
from embedding_cache.verify.planted import PLANTED, PlantedBug

#: CPU seconds per condition for the clean run in tests (about a minute on 2
#: workers); ``embedding-cache verify`` runs it with the full budget.
TEST_BUDGET = 2.0

# ---------------------------------------------------------------- CrossHair runs


@pytest.fixture(scope="module")
def planted_result() -> CrosshairResult:
    return run_crosshair(planted=True)


@pytest.mark.slow
def test_clean_transitions_have_no_counterexample() -> None:
    result = run_crosshair(CLEAN_TARGETS, timeout=TEST_BUDGET)
    assert result.functions == len(CLEAN_TARGETS)
    # Each transition's own postconditions plus the five swept invariants.
    assert result.conditions >= len(CLEAN_TARGETS) * (len(invariants.INVARIANTS) + 2)
    refuted = [d for d in result.details if d.outcome not in ("confirmed", "unrefuted")]
    assert not refuted, "\n".join(f"{d.target} {d.condition}: {d.message}" for d in refuted)
    assert result.counterexamples == 0 and result.ok
    # Non-vacuity of the search itself: every condition got past the
    # preconditions on many paths (over built states, not only empty ones).
    assert all(d.paths >= 20 for d in result.details), [
        (d.target, d.check, d.paths) for d in result.details
    ]


@pytest.mark.slow
@pytest.mark.parametrize("bug", PLANTED, ids=[b.target.rsplit(".", 1)[1] for b in PLANTED])
def test_planted_bug_is_caught(planted_result: CrosshairResult, bug: PlantedBug) -> None:
    found = planted_result.caught()[bug.target]
    assert found is not None, f"CrossHair missed {bug.target}"
    assert found.condition in bug.expect, (found.condition, found.message)
    assert f"calling {bug.target.rsplit('.', 1)[1]}(CacheState(" in found.message


@pytest.mark.slow
def test_caught_over_planted(planted_result: CrosshairResult) -> None:
    caught = sum(found is not None for found in planted_result.caught().values())
    assert (caught, planted_result.functions) == (len(PLANTED), len(PLANTED))


def test_worker_refuses_a_build_without_the_sweep() -> None:
    # Without EMBEDDING_CACHE_CHECKED=full the transitions carry no invariant
    # pre/postconditions, and a clean report would mean nothing.
    env = {**os.environ, "EMBEDDING_CACHE_CHECKED": "1"}
    module = "embedding_cache.verify.crosshair_check"
    proc = subprocess.run(
        [sys.executable, "-m", module, CLEAN_TARGETS[0]], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 2 and "EMBEDDING_CACHE_CHECKED=full" in proc.stderr


# ---------------------------------------------------------------- the state factory


def _all_choices() -> itertools.chain[tuple[int, int, tuple[int, ...], tuple[int, ...], bool]]:
    """Every in-range choice the CrossHair factory may make."""
    return itertools.chain.from_iterable(
        (
            (n, m, owners, pins, desc)
            for owners in itertools.product(range(-1, m), repeat=n)
            for pins in itertools.product(range(-1, MAX_PIN + 1), repeat=m)
            for desc in (False, True)
        )
        for n in range(MAX_BLOCKS + 1)
        for m in range(MAX_ENTRIES + 1)
    )


def _shape(s: CacheState) -> tuple[object, ...]:
    """A state up to key names and free-stack order (what the factory promises to reach)."""
    queued = tuple(s.entries[k].block_ids for k in s.queue)
    held = sorted((e.pin_count, e.block_ids) for k, e in s.entries.items() if k not in s.queue)
    return (s.num_blocks, tuple(sorted(s.free)), queued, tuple(held), s.evictable_blocks)


@pytest.fixture(scope="module")
def built_shapes() -> set[tuple[object, ...]]:
    shapes = set()
    for n, m, owners, pins, desc in _all_choices():
        s = build_state(n, m, owners, pins, desc)
        assert invariants.violations(s) == [], (n, m, owners, pins, s)
        shapes.add(_shape(s))
    return shapes


def test_factory_reaches_every_small_reachable_state(built_shapes: set[tuple[object, ...]]) -> None:
    # Random walks of the real transitions over pools of up to MAX_BLOCKS
    # blocks, never holding more than MAX_ENTRIES entries or pins above MAX_PIN.
    rng = random.Random(4)
    reached = 0
    for _ in range(300):
        s = CacheState(rng.randint(0, MAX_BLOCKS))
        for _ in range(12):
            key = f"x{rng.randint(0, 4)}"
            op = rng.choice(["alloc", "mark_ready", "pin", "pin_if_ready", "unpin", "discard"])
            entry = s.entries.get(key)
            if op == "alloc" and len(s.entries) >= MAX_ENTRIES:
                continue
            if op in ("pin", "pin_if_ready") and entry is not None and entry.pin_count >= MAX_PIN:
                continue
            try:
                if op == "alloc":
                    transitions.alloc(s, key, rng.randint(0, s.num_blocks))
                else:
                    getattr(transitions, op)(s, key)
            except errors.CacheError:
                continue
            assert len(s.entries) <= MAX_ENTRIES
            assert _shape(s) in built_shapes, s
            reached += 1
    assert reached > 1000


# ---------------------------------------------------------------- documented raises


def test_documented_raises_are_read_without_type_error() -> None:
    assert documented_raises(transitions.alloc) == {
        ValueError,
        errors.DuplicateAllocError,
        errors.CapacityError,
    }
    assert documented_raises(transitions.mark_ready) == {
        errors.UnknownKeyError,
        errors.AlreadyReadyError,
    }
    assert documented_raises(transitions.pin_if_ready) == set()


@pytest.mark.parametrize("bug", PLANTED, ids=[b.target.rsplit(".", 1)[1] for b in PLANTED])
def test_planted_copies_document_the_same_raises(bug: PlantedBug) -> None:
    func = getattr(planted, bug.target.rsplit(".", 1)[1])
    real = getattr(transitions, bug.transition)
    assert documented_raises(func) == documented_raises(real)
    assert "PLANTED BUG" in (func.__doc__ or "")
