"""CrossHair checks the transitions' contracts under every policy, and catches planted bugs.

The CrossHair runs here are a fast subset, marked ``slow``: ``alloc`` (the
policy's victim rule) and ``unpin`` (where a released entry rejoins) under
every policy yield no counterexample within a budget of paths, and every
policy's own planted bugs plus the shared ones under the default policy each
yield one naming a condition the catalogue expects; a catch repeats path for
path (budgets are counted in paths, not seconds). ``embedding-cache verify`` runs
all of it: every transition under every policy, every planted bug under every
policy it applies to. The fast tests check what those runs rest on: the state
factory builds only well-formed states and reaches every small reachable
state of each policy (up to key names and free-stack order), copies of its
states keep their hooks, and the documented raises CrossHair accepts are the
ones the docstrings list.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from embedding_cache import EVICTION_POLICIES, errors, invariants, lease_transitions, transitions
from embedding_cache.state import CacheState
from embedding_cache_checker.policies import PolicyAdapter, adapter, adapters
from embedding_cache_checker.verify.crosshair_budget import (
    PER_CONDITION_SECONDS,
    PLANTED_PATHS,
    ConditionOutcome,
    ConditionResult,
    cap_seconds,
    paths_for,
)
from embedding_cache_checker.verify.crosshair_check import (
    CrosshairResult,
    clean_jobs,
    planted_jobs,
    run_crosshair,
)
from embedding_cache_checker.verify.crosshair_plugin import (
    KEYS,
    MAX_BLOCKS,
    MAX_ENTRIES,
    MAX_PIN,
    build_state,
    configure,
    documented_raises,
)
from embedding_cache_checker.verify.planted import DEFAULT_POLICY, PLANTED, PlantedBug, by_name

#: Paths per condition for the clean runs in tests; ``embedding-cache verify``
#: runs every transition with its own budget.
TEST_PATHS = 15
#: The clean subset: alloc under every policy, the transition where the policies differ
#: most (its victims, the order rule, contiguity's plan). unpin's clean run (the release
#: hooks), like every other transition's, is the main job's (``verify``'s crosshair
#: step): with it here the test took 245-358 s of CI's 30 minutes on 2 cores.
CLEAN_SUBSET = clean_jobs(transitions=("alloc",))
#: The planted subset: every policy's own bugs, and the shared ones under the default policy.
PLANTED_SUBSET = [
    (policy, name)
    for policy, name in planted_jobs()
    if by_name(name).policy is not None or policy == DEFAULT_POLICY
]

# ---------------------------------------------------------------- CrossHair runs


@pytest.fixture(scope="module")
def planted_result() -> CrosshairResult:
    return run_crosshair(PLANTED_SUBSET, planted=True)


@pytest.mark.slow
def test_clean_transitions_have_no_counterexample() -> None:
    result = run_crosshair(CLEAN_SUBSET, paths=TEST_PATHS)
    assert result.functions == len(CLEAN_SUBSET)
    # Each transition's own postconditions plus the swept invariants, per policy.
    assert result.conditions >= len(CLEAN_SUBSET) * (len(invariants.INVARIANTS) + 2)
    refuted = [d for d in result.details if d.outcome not in ("confirmed", "unrefuted")]
    assert not refuted, "\n".join(
        f"{d.policy} {d.unit} {d.condition}: {d.message}" for d in refuted
    )
    assert result.counterexamples == 0 and result.ok
    assert set(result.per_policy()) == set(EVICTION_POLICIES)
    # Non-vacuity of the search itself: every condition got past the
    # preconditions on many paths (over built states, not only empty ones).
    assert all(d.paths >= 10 for d in result.details), [
        (d.policy, d.unit, d.check, d.paths) for d in result.details
    ]
    # The budget, not the clock, ended each search: every unrefuted condition
    # started exactly its budget of paths, and no time limit cut any short.
    assert all(d.iterations == TEST_PATHS for d in result.details if d.outcome == "unrefuted"), [
        (d.policy, d.unit, d.check, d.iterations) for d in result.details
    ]
    assert result.load_independent and not result.gave_up()


def _job_id(job: tuple[str, str]) -> str:
    return f"{job[1]}-{job[0]}"


@pytest.mark.slow
@pytest.mark.parametrize("job", PLANTED_SUBSET, ids=_job_id)
def test_planted_bug_is_caught(planted_result: CrosshairResult, job: tuple[str, str]) -> None:
    policy, name = job
    bug = by_name(name)
    found = planted_result.caught()[job]
    assert found is not None, f"CrossHair missed {name} under {policy}"
    assert found.condition in bug.expected(policy), (found.condition, found.message)
    called = bug.target.rsplit(".", 1)[1]
    assert f"calling {called}(CacheState(" in found.message, found.message


@pytest.mark.slow
def test_caught_over_planted_per_policy(planted_result: CrosshairResult) -> None:
    tallies = planted_result.per_policy()
    assert set(tallies) == set(EVICTION_POLICIES)
    for policy, tally in tallies.items():
        planted = sum(job[0] == policy for job in PLANTED_SUBSET)
        assert (tally.caught, tally.jobs) == (planted, planted), policy


def _signature(result: CrosshairResult, job: tuple[str, str]) -> list[tuple[str, str, int, int]]:
    """What a deterministic search must repeat: per condition, its outcome and paths."""
    mine = [d for d in result.details if (d.policy, d.unit) == job]
    return [(d.condition, d.outcome, d.iterations, d.paths) for d in mine]


@pytest.mark.slow
def test_a_catch_repeats_path_for_path(planted_result: CrosshairResult) -> None:
    """The budget counts paths, so a catch comes at the same path whatever ran before it
    in the worker and however busy the machine: per policy, its quickest catch and its
    quickest that took a real search (10+ paths), rerun in one fresh worker in the
    opposite order, repeat exactly."""
    assert planted_result.load_independent and not planted_result.gave_up()
    by_cost = sorted(
        (sum(d.iterations for d in planted_result.details if (d.policy, d.unit) == job), job)
        for job in PLANTED_SUBSET
    )
    picks: list[tuple[str, str]] = []
    for policy in EVICTION_POLICIES:
        mine = [(cost, job) for cost, job in by_cost if job[0] == policy]
        searched = [job for cost, job in mine if cost >= 10][:1]
        picks += dict.fromkeys([mine[0][1], *searched])
    again = run_crosshair(picks[::-1], planted=True, jobs=1)
    for job in picks:
        assert _signature(again, job) == _signature(planted_result, job), job
        assert again.caught()[job] is not None, job


def _result(*details: ConditionResult) -> CrosshairResult:
    jobs = {(d.policy, d.unit) for d in details}
    found = sum(d.outcome == "counterexample" for d in details)
    return CrosshairResult(len(jobs), len(details), found, details, 1.0)


def _detail(
    unit: str, outcome: ConditionOutcome, iterations: int, time_outs: int = 0
) -> ConditionResult:
    target = "embedding_cache.transitions.alloc"
    return ConditionResult(
        "fifo", unit, target, "C", "c", outcome, iterations, 1.0, "", iterations, time_outs
    )


def test_a_condition_at_its_cpu_cap_gave_up_and_is_not_a_miss() -> None:
    capped = _result(_detail("Bug", "gave_up", 5))
    assert capped.caught() == {("fifo", "Bug"): None}
    assert capped.gave_up() == {("fifo", "Bug")}
    assert not capped.ok and not capped.load_independent
    assert capped.per_policy()["fifo"].gave_up == 1
    assert "GAVE UP" in capped.summary()[0]
    assert capped.to_json()["gave_up"] == [("fifo", "Bug")]
    # A later condition of the same job caught it: caught, not given up.
    caught = _result(_detail("Bug", "gave_up", 5), _detail("Bug", "counterexample", 7))
    assert caught.gave_up() == set() and caught.caught()[("fifo", "Bug")] is not None


def test_a_time_out_makes_a_run_load_dependent_but_not_failed() -> None:
    result = _result(_detail("alloc", "unrefuted", 40, time_outs=1))
    assert result.ok and not result.load_independent and not result.gave_up()
    assert "1 time-outs" in result.summary()[0]
    assert _result(_detail("alloc", "unrefuted", 40)).load_independent


def test_budgets_are_paths_and_the_cap_is_far_above_them() -> None:
    paths = paths_for(PER_CONDITION_SECONDS)
    assert isinstance(paths, int) and paths >= 10
    assert paths_for(6 * PER_CONDITION_SECONDS) >= 5 * paths  # a larger knob buys more paths
    # The cap is a safety net: many times what the budget costs on an idle machine.
    assert cap_seconds(paths) >= 5 * PER_CONDITION_SECONDS
    assert paths < PLANTED_PATHS


def _worker_rows(*args: str) -> list[dict[str, Any]]:
    """The JSON rows the CrossHair worker prints for ``args`` (a subprocess: in this
    process ``crosshair`` is this test package)."""
    env = {**os.environ, "EMBEDDING_CACHE_CHECKED": "full", "PYTHONHASHSEED": "0"}
    module = "embedding_cache_checker.verify.crosshair_check"
    proc = subprocess.run(
        [sys.executable, "-m", module, *args], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip() != "--"]


def test_a_condition_stopped_by_its_cap_gave_up() -> None:
    """A CPU cap below one path's cost: each search stops short of its budget and says
    so (gave_up: not vacuous, though no path got past the preconditions), where a
    spent budget says unrefuted."""
    rows = _worker_rows("--paths", "50", "--cap-seconds", "0.000001", "fifo:discard")
    assert rows and all(r["outcome"] == "gave_up" and r["iterations"] < 50 for r in rows), rows
    rows = _worker_rows("--paths", "2", "fifo:discard")
    assert rows and all(r["outcome"] == "unrefuted" and r["iterations"] == 2 for r in rows), rows


def test_the_worker_counts_paths_cut_short_for_time() -> None:
    """A per-path CPU limit no path can meet: every path is cut short and counted, so a
    report can tell a load-independent outcome from one a time limit touched."""
    rows = _worker_rows("--paths", "2", "--per-path-timeout", "0.000001", "fifo:discard")
    assert rows and all(row["time_outs"] > 0 for row in rows), rows
    assert all(row["outcome"] != "counterexample" for row in rows), rows


def test_every_policy_has_planted_bugs_for_crosshair() -> None:
    """verify's planted run: the shared bugs and the policy's own, under every policy."""
    jobs = planted_jobs()
    for policy in EVICTION_POLICIES:
        names = {name for p, name in jobs if p == policy}
        shared = {b.name for b in PLANTED if b.policy is None and b.caught_by("crosshair")}
        assert shared <= names
        assert any(by_name(name).policy == policy for name in names), policy
    blind = [b for b in PLANTED if not b.caught_by("crosshair")]
    assert all(b.name not in {name for _, name in jobs} for b in blind)


def test_worker_refuses_a_build_without_the_sweep() -> None:
    # Without EMBEDDING_CACHE_CHECKED=full the transitions carry no invariant
    # pre/postconditions, and a clean report would mean nothing.
    env = {**os.environ, "EMBEDDING_CACHE_CHECKED": "1"}
    module = "embedding_cache_checker.verify.crosshair_check"
    proc = subprocess.run(
        [sys.executable, "-m", module, "fifo:alloc"], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 2 and "EMBEDDING_CACHE_CHECKED=full" in proc.stderr


# ---------------------------------------------------------------- the state factory

Choice = tuple[int, int, tuple[int, ...], tuple[int, ...], bool, tuple[int, ...]]


def _core_choices() -> Iterator[tuple[int, int, tuple[int, ...], tuple[int, ...], bool]]:
    """Every in-range core choice the CrossHair factory may make."""
    for n in range(MAX_BLOCKS + 1):
        for m in range(MAX_ENTRIES + 1):
            for owners in itertools.product(range(-1, m), repeat=n):
                for pins in itertools.product(range(-1, MAX_PIN + 1), repeat=m):
                    for desc in (False, True):
                        pad_o = owners + (-1,) * (MAX_BLOCKS - n)
                        pad_p = pins + (0,) * (MAX_ENTRIES - m)
                        yield n, m, pad_o, pad_p, desc


def _policy_choice(policy: str, rng: random.Random) -> tuple[int, ...]:
    """A random in-range policy choice (unbounded ones drawn up to 12)."""
    side = adapter(policy)
    drawn = [rng.randint(lo, 12 if hi is None else hi) for lo, hi in side.choice_bounds]
    for i, j in side.at_most:
        drawn[i] = min(drawn[i], drawn[j])
    return tuple(drawn)


@pytest.mark.parametrize("policy", list(EVICTION_POLICIES))
def test_factory_builds_only_well_formed_states(policy: str) -> None:
    rng = random.Random(policy)
    built = 0
    for n, m, owners, pins, desc in _core_choices():
        # Every core choice, each with a random policy choice (if the policy has any).
        s = build_state(n, m, owners, pins, desc, policy, _policy_choice(policy, rng))
        assert invariants.violations(s) == [], (n, m, owners, pins, s)
        assert s.policy.name == policy
        built += 1
    assert built > 10_000


def _rename(value: Any, names: dict[str, str]) -> Any:
    """``value`` (a policy's abstract variables) with its keys renamed."""
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, dict):
        return {_rename(k, names): _rename(v, names) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_rename(v, names) for v in value)
    return value


def _preimage(s: CacheState) -> tuple[Choice, dict[str, str]]:
    """The factory's choices that build ``s`` up to key names, and the renaming."""
    side = adapter(s.policy.name)
    order = side.listed(s.policy)
    order += sorted(k for k in s.entries if k not in order)
    names = {key: KEYS[i] for i, key in enumerate(order)}
    owners = [-1] * MAX_BLOCKS
    for i, key in enumerate(order):
        for b in s.entries[key].block_ids:
            owners[b] = i
    pins = [s.entries[k].pin_count for k in order] + [0] * (MAX_ENTRIES - len(order))
    sizes = [len(s.entries[k].block_ids) for k in order]
    choices, own_names = side.preimage(s.policy, order, sizes)
    names.update(own_names)
    choice = (s.num_blocks, len(order), tuple(owners), tuple(pins), False, tuple(choices))
    return choice, names


def _shape(s: CacheState, names: dict[str, str]) -> tuple[object, ...]:
    """A state with its keys renamed and its free stack as a set."""
    entries = sorted((names.get(k, k), e.pin_count, e.block_ids) for k, e in s.entries.items())
    policy = _rename(s.checks.abstract(), names)
    return (s.num_blocks, sorted(s.free), entries, s.evictable_blocks, sorted(policy.items()))


def _walk(policy: str, rng: random.Random) -> Iterator[CacheState]:
    """A random walk of the real transitions over a pool of at most MAX_BLOCKS blocks,
    never holding more than MAX_ENTRIES entries or pins above MAX_PIN. Lifecycle calls
    go to keys in the state they need, so that entries get used, evicted (into
    s3fifo's ghost, and back) and promoted."""
    num_blocks = rng.randint(1, MAX_BLOCKS)
    s = CacheState(num_blocks, adapter(policy).factory(num_blocks))

    def live(where: Callable[[int], bool]) -> list[str]:
        return sorted(k for k, e in s.entries.items() if where(e.pin_count))

    for _ in range(24):
        op = rng.choice(["alloc", "alloc", "mark_ready", "pin", "pin", "unpin", "unpin", "discard"])
        keys = {
            "alloc": [f"x{i}" for i in range(5)],
            "mark_ready": live(lambda pins: pins < 0),
            "pin": live(lambda pins: 0 <= pins < MAX_PIN),
            "unpin": live(lambda pins: pins > 0),
            "discard": live(lambda pins: pins < 0),
        }[op]
        if not keys or (op == "alloc" and len(s.entries) >= MAX_ENTRIES):
            continue
        key = rng.choice(keys)
        if op == "pin" and rng.random() < 0.5:
            op = "pin_if_ready"
        try:
            if op == "alloc":
                transitions.alloc(s, key, rng.choice([0, 1, 1, 1, 2, s.num_blocks]))
            else:
                getattr(transitions, op)(s, key)
        except errors.CacheError:
            continue
        yield s


#: The built states' own names: no renaming.
IDENTITY: dict[str, str] = {}


@pytest.mark.parametrize("policy", list(EVICTION_POLICIES))
def test_factory_reaches_every_small_reachable_state(policy: str) -> None:
    rng = random.Random(4)
    reached = 0
    for _ in range(1000):
        for s in _walk(policy, rng):
            (n, m, owners, pins, desc, choices), names = _preimage(s)
            side = adapter(policy)
            for (lo, hi), value in zip(side.choice_bounds, choices, strict=True):
                assert lo <= value and (hi is None or value <= hi), (choices, s)
            assert all(choices[i] <= choices[j] for i, j in side.at_most), (choices, s)
            built = build_state(n, m, owners, pins, desc, policy, choices)
            assert _shape(built, IDENTITY) == _shape(s, names), s
            reached += 1
    assert reached > 5000


@pytest.mark.parametrize("policy", list(EVICTION_POLICIES))
def test_a_copy_of_a_built_state_evicts_from_its_own_policy(policy: str) -> None:
    """CrossHair deep-copies its arguments: the copy's hooks must act on the copy
    (fifo's are the OrderedDict's own bound methods, which deepcopy would not rebind)."""
    side = adapter(policy)
    low = [lo for lo, _ in side.choice_bounds]
    for i, j in side.at_most:
        low[i] = min(low[i], low[j])
    s = build_state(3, 2, (0, 1, -1, -1), (0, 0, 0), policy=policy, choices=low)
    twin = copy.deepcopy(s)
    transitions.alloc(twin, "new", 3)
    invariants.check(twin)
    invariants.check(s)
    assert set(s.entries) == {"k0", "k1"} and set(s.policy.evictable_keys()) == {"k0", "k1"}
    assert set(twin.entries) == {"new"} and not set(twin.policy.evictable_keys())


# ---------------------------------------------------------------- the adapters


def test_every_registered_policy_has_its_adapter() -> None:
    found = adapters()
    assert list(found) == list(EVICTION_POLICIES)
    for name, side in found.items():
        assert isinstance(side, PolicyAdapter) and side.name == name
        assert isinstance(side.factory(4), EVICTION_POLICIES[name])
        n = len(side.choice_bounds)
        assert all(0 <= i < n and 0 <= j < n and i != j for i, j in side.at_most), name


def test_a_registered_policy_without_an_adapter_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(EVICTION_POLICIES, "nosuchpolicy", EVICTION_POLICIES[DEFAULT_POLICY])
    with pytest.raises(
        LookupError, match=r"embedding_cache_checker\.verify\.planted\.nosuchpolicy"
    ):
        adapter("nosuchpolicy")
    with pytest.raises(LookupError, match="no checker adapter"):
        configure("nosuchpolicy")


def test_an_unregistered_policy_has_no_adapter() -> None:
    with pytest.raises(KeyError, match="unknown policy"):
        adapter("nosuchpolicy")
    with pytest.raises(ValueError, match="no such policy"):
        configure("nosuchpolicy")


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


@pytest.mark.parametrize("bug", [b for b in PLANTED if b.body is not None], ids=lambda b: b.name)
def test_planted_copies_document_the_same_raises(bug: PlantedBug) -> None:
    assert bug.body is not None
    home = transitions if hasattr(transitions, bug.transition) else lease_transitions
    real = getattr(home, bug.transition)
    assert documented_raises(bug.body) == documented_raises(real)
    assert "PLANTED BUG" in (bug.body.__doc__ or "")
