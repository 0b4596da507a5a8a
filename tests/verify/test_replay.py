"""State-graph replay (conformance link 1): hand-made graphs, then every policy's replay models.

The unit tests replay a four-state graph written in TLC's notation (one key,
one block) on correct and deliberately wrong operations, and read gdsf and
s3fifo states the way the code is read. The ``tlc`` tests dump the real
graphs once per module (tla/README.md, "For the conformance checks") and
replay every edge on the real transitions under each policy, and with each
planted bug of the catalogue (``verify.planted``) swapped in.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from cores import tlc_workers

from embedding_cache import EVICTION_POLICIES, Doorkeeper, transitions
from embedding_cache.errors import CacheError
from embedding_cache.policies import GdsfPolicy, S3FifoPolicy, make_policy
from embedding_cache.state import CacheState
from embedding_cache.verification import LEASE_OPERATIONS
from embedding_cache_checker.abstraction import abstract_state, block_state, raw_view
from embedding_cache_checker.tlc.manifest import find_tla_dir
from embedding_cache_checker.verify.alloc_rule import (
    SEED_RULE,
    AllocRule,
    check_rule,
    rule_of_entry,
)
from embedding_cache_checker.verify.graph_dump import (
    DumpedModel,
    dump_state_graph,
    model_files,
    model_policy,
)
from embedding_cache_checker.verify.lease_replay import replay_any_graph
from embedding_cache_checker.verify.model_code import (
    check_constants,
    code_constants,
    code_name,
    code_params,
    policy_factory,
)
from embedding_cache_checker.verify.plans import load_plans
from embedding_cache_checker.verify.planted import PlantedBug, by_name, for_policy
from embedding_cache_checker.verify.planted.admission import DoorkeeperForgets
from embedding_cache_checker.verify.planted_replay import planted_replay, replay_model
from embedding_cache_checker.verify.replay import (
    REAL_OPERATIONS,
    GraphReplayReport,
    clone,
    expected_result,
    replay_graph,
    result_kind,
)
from embedding_cache_checker.verify.spec_read import last_op, spec_abstract
from embedding_cache_checker.verify.state_graph import StateGraph
from embedding_cache_checker.verify.tla_values import TlaValue, parse_state

# ---------------------------------------------------------------- a hand-made graph

#: Keys = {k1}, N = 1, MaxPins = 1. From Init the spec has exactly three steps
#: (Alloc k1 of 0 or 1 blocks, PinIfReady of the absent k1), so every other
#: call there must be refused; the three targets have no edges, so the replay
#: treats them as a depth-bounded frontier (no refusal checks).
_EMPTY = "/\\ free = {0}\n/\\ queue = <<>>\n/\\ evictable = 0\n/\\ entries = << >>\n"
TINY = StateGraph(
    states={
        "0": parse_state(_EMPTY + '/\\ lastOp = [n |-> 0, op |-> "Init", key |-> "none"]'),
        "1": parse_state(
            "/\\ free = {0}\n/\\ queue = <<>>\n/\\ evictable = 0\n"
            "/\\ entries = (k1 :> [blocks |-> {}, pins |-> -1])\n"
            '/\\ lastOp = [n |-> 0, op |-> "Alloc", key |-> k1]'
        ),
        "2": parse_state(
            "/\\ free = {}\n/\\ queue = <<>>\n/\\ evictable = 0\n"
            "/\\ entries = (k1 :> [blocks |-> {0}, pins |-> -1])\n"
            '/\\ lastOp = [n |-> 1, op |-> "Alloc", key |-> k1]'
        ),
        "3": parse_state(_EMPTY + '/\\ lastOp = [n |-> 0, op |-> "PinIfReady", key |-> k1]'),
    },
    edges=[("0", "1", "Alloc"), ("0", "2", "Alloc"), ("0", "3", "PinIfReady")],
    initial=["0"],
)
TINY_KEYS, TINY_N, TINY_MAX_PINS = ["k1"], 1, 1


def _replay_tiny(**overrides: Callable[..., Any]) -> GraphReplayReport:
    ops = {**REAL_OPERATIONS, **overrides}
    return replay_graph(TINY, TINY_KEYS, TINY_N, TINY_MAX_PINS, ops)


def test_tiny_graph_replays_cleanly_on_the_real_transitions() -> None:
    report = _replay_tiny()
    assert report.ok, report.mismatches
    assert (report.states, report.edges_total, report.edges_replayed) == (4, 3, 3)
    # Refused at Init: mark_ready/pin/unpin/discard of the absent k1, alloc(k1, N + 1).
    assert report.disabled_checked == 5


# Wrong operations. Each wraps the real one, so the only divergence is the planted one.


def _alloc_returns_ready(s: CacheState, key: str, n: int) -> Any:
    entry = transitions.alloc(s, key, n)
    transitions.mark_ready(s, key)  # wrong: a new entry must start not-ready
    return entry


def _alloc_takes_spare_block(s: CacheState, key: str, n: int) -> Any:
    # wrong: takes a block more than asked while one is free
    return transitions.alloc(s, key, n + 1 if len(s.free) > n else n)


def _pin_if_ready_raises(s: CacheState, key: str) -> Any:
    raise CacheError(f"{key} refused")  # wrong: pin_if_ready of an absent key is a query


def _discard_accepts_absent(s: CacheState, key: str) -> None:
    if key in s.entries:  # wrong: an absent key must raise UnknownKeyError
        transitions.discard(s, key)


def _unpin_leaks_on_refusal(s: CacheState, key: str) -> None:
    try:
        transitions.unpin(s, key)
    except CacheError:
        s.free.take(1)  # wrong: a refused call must change nothing (MisuseUnchangedProp)
        raise


def _pin_untyped_error(s: CacheState, key: str) -> None:
    raise KeyError(key)  # wrong: misuse must raise a typed CacheError


@pytest.mark.parametrize(
    ("override", "steps", "detail"),
    [
        (
            {"alloc": _alloc_returns_ready},
            ["alloc('k1', 0)", "alloc('k1', 1)"],
            "returned entry, spec says not-ready-entry",
        ),
        ({"alloc": _alloc_takes_spare_block}, ["alloc('k1', 0)"], "state AbstractState("),
        ({"pin_if_ready": _pin_if_ready_raises}, ["pin_if_ready('k1')"], "raised CacheError"),
        ({"discard": _discard_accepts_absent}, ["discard('k1')"], "accepted (returned none)"),
        ({"unpin": _unpin_leaks_on_refusal}, ["unpin('k1')"], "raised but changed"),
        ({"pin": _pin_untyped_error}, ["pin('k1')"], "raised KeyError, not a typed CacheError"),
    ],
    ids=["result", "state", "step-raises", "refusal-accepted", "refusal-changes", "untyped"],
)
def test_tiny_graph_catches_a_wrong_operation(
    override: dict[str, Callable[..., Any]], steps: list[str], detail: str
) -> None:
    report = _replay_tiny(**override)
    assert not report.ok
    assert [m.step for m in report.mismatches] == steps
    assert all(m.source == "0" and m.detail.startswith(detail) for m in report.mismatches), (
        report.mismatches
    )


@pytest.mark.parametrize("policy", sorted(EVICTION_POLICIES))
def test_a_change_of_the_abstract_state_changes_the_raw_view(policy: str) -> None:
    """``raw_view`` lets a refusal skip reading the abstract state when the view is
    unchanged: sound only if every change of ``abstract_state`` changes it too. Checked
    on every step of a random walk (calls the code refuses included) under each policy,
    with the doorkeeper's door, and shown to move with a change of the free pool alone."""
    rng = random.Random(7)
    s = CacheState(4, make_policy(policy, 4), admission=Doorkeeper(1))
    calls = [("alloc", 1), ("alloc", 2), ("mark_ready", 0), ("pin", 0), ("unpin", 0)]
    calls += [("pin_if_ready", 0), ("discard", 0)]
    moved = 0
    for _ in range(3000):
        before_raw, before = raw_view(s), abstract_state(s)
        op, n = rng.choice(calls)
        key = rng.choice("abcde")
        with contextlib.suppress(CacheError):  # a refused call is a step of the walk too
            REAL_OPERATIONS[op](s, key, n) if op == "alloc" else REAL_OPERATIONS[op](s, key)
        if abstract_state(s) != before:
            moved += 1
            assert raw_view(s) != before_raw, (op, key, n, before, abstract_state(s))
    assert moved > 500
    before_raw = raw_view(s)
    s.free.take(1) if len(s.free) else s.free.give([0])
    assert raw_view(s) != before_raw
    # The policy's variables alone: the oldest ready key held and released again (fifo
    # then holds it newest), the entries and counts as they were.
    s = CacheState(4, make_policy(policy, 4))
    for key in "ab":
        transitions.alloc(s, key, 1)
        transitions.mark_ready(s, key)
    before_raw, before = raw_view(s), abstract_state(s)
    s.on_hold("a")
    s.on_release("a", 1)
    assert abstract_state(s).entries == before.entries
    assert policy != "fifo" or abstract_state(s) != before
    assert abstract_state(s) == before or raw_view(s) != before_raw


def _replay_alloc_returns_ready(**options: Any) -> GraphReplayReport:
    """The tiny graph replayed with an alloc that returns a ready entry (every alloc edge
    mismatches), with ``replay_graph``'s ``options``."""
    ops = {**REAL_OPERATIONS, "alloc": _alloc_returns_ready}
    return replay_graph(TINY, TINY_KEYS, TINY_N, TINY_MAX_PINS, ops, **options)


def test_mismatches_beyond_the_limit_are_counted() -> None:
    report = _replay_alloc_returns_ready(max_mismatches=1)
    assert [m.step for m in report.mismatches] == ["alloc('k1', 0)", ""]
    assert report.mismatches[1].detail == "... and 1 more"


def test_stop_at_first_leaves_edges_unreplayed_and_not_ok() -> None:
    report = _replay_alloc_returns_ready(stop_at_first=True)
    assert len(report.mismatches) == 1 and report.edges_replayed == 1 and not report.ok


def test_a_missing_spec_step_is_a_refusal_the_code_does_not_make() -> None:
    # Drop the Alloc of 0 blocks from the graph: the code's alloc(k1, 0) now
    # succeeds where the "spec" has no step, which the replay must report.
    partial = StateGraph(TINY.states, TINY.edges[1:], TINY.initial)
    report = replay_graph(partial, TINY_KEYS, TINY_N, TINY_MAX_PINS)
    assert [m.step for m in report.mismatches] == ["alloc('k1', 0)"]
    assert report.mismatches[0].detail.startswith("accepted")


# ---------------------------------------------------------------- the alloc rules (hand-made)

#: Keys = {k1}, N = 2, contiguity 1, the graph keeping every choice of ids (no
#: CanonicalAlloc): from Init the spec has Alloc k1 of 0 blocks, of 1 block at
#: {0} or at {1}, of 2 blocks, and PinIfReady of the absent k1; the targets have
#: no edges (a frontier).
_FIFO_EMPTY = "/\\ policy = [queue |-> <<>>]\n/\\ evictable = 0\n"


def _alloc_state(blocks: str, free: str, n: int) -> str:
    return (
        f"{_FIFO_EMPTY}/\\ free = {free}\n"
        f"/\\ entries = (k1 :> [blocks |-> {blocks}, pins |-> -1])\n"
        f'/\\ lastOp = [n |-> {n}, op |-> "Alloc", key |-> k1]'
    )


_INIT2 = _FIFO_EMPTY + "/\\ free = {0, 1}\n/\\ entries = << >>\n"
EXACT = StateGraph(
    states={
        "0": parse_state(_INIT2 + '/\\ lastOp = [n |-> 0, op |-> "Init", key |-> "none"]'),
        "1": parse_state(_alloc_state("{}", "{0, 1}", 0)),
        "2": parse_state(_alloc_state("{0}", "{1}", 1)),
        "3": parse_state(_alloc_state("{1}", "{0}", 1)),
        "4": parse_state(_alloc_state("{0, 1}", "{}", 2)),
        "5": parse_state(_INIT2 + '/\\ lastOp = [n |-> 0, op |-> "PinIfReady", key |-> k1]'),
    },
    edges=[("0", target, "UnnamedAction") for target in "12345"],
    initial=["0"],
)
CONTIGUOUS = AllocRule(allocator="extents", contiguity=1)


def _code_choice() -> str:
    """The node of EXACT holding the ids the code's alloc(k1, 1) takes."""
    s = CONTIGUOUS.state(2, "fifo")
    REAL_OPERATIONS["alloc"](s, "k1", 1)
    return "2" if block_state(s).entries == (("k1", frozenset({0})),) else "3"


def test_block_exact_replay_follows_the_codes_choice_of_ids() -> None:
    report = replay_graph(EXACT, ["k1"], 2, 1, rule=CONTIGUOUS)
    assert report.ok and report.block_exact, report.mismatches
    # Four calls, each replayed once; the alloc of one block has two edges, one of
    # which is the code's: the other is a choice it did not make.
    assert (report.edges_replayed, report.edges_other_choice, report.edges_unreached) == (4, 1, 0)
    assert report.states_reached == 5 and report.disabled_checked == 5


def test_block_exact_replay_reports_a_choice_of_ids_the_spec_lacks() -> None:
    mine = _code_choice()
    without = StateGraph(EXACT.states, [e for e in EXACT.edges if e[1] != mine], EXACT.initial)
    report = replay_graph(without, ["k1"], 2, 1, rule=CONTIGUOUS)
    assert [m.step for m in report.mismatches] == ["alloc('k1', 1)"]
    assert "no edge of the spec holds them" in report.mismatches[0].detail
    assert not report.ok
    # Counting blocks only, the same graph replays: only the block-exact mode sees ids.
    seed = replay_graph(without, ["k1"], 2, 1)
    assert seed.ok and not seed.block_exact and seed.edges_replayed == seed.edges_total == 4


def test_counting_blocks_every_choice_of_ids_is_an_edge_to_replay() -> None:
    report = replay_graph(EXACT, ["k1"], 2, 1)
    assert report.ok and report.edges_replayed == report.edges_total == 5
    assert report.states_reached == 6  # both choices reached, from one code state each


def test_a_report_that_skips_edges_is_complete_only_block_exact() -> None:
    skipped = GraphReplayReport(edges_total=3, edges_replayed=2, edges_other_choice=1)
    assert not skipped.complete and not skipped.ok
    exact = GraphReplayReport(edges_total=3, edges_replayed=2, edges_unreached=1, block_exact=True)
    assert exact.complete and exact.ok
    assert not GraphReplayReport(edges_total=3, edges_replayed=1, block_exact=True).complete


#: The door's TLA+ states: k1 ready (one block, the whole pool) and the door as given.
def _door_state(door: str, op: str, key: str) -> dict[str, TlaValue]:
    return parse_state(
        "/\\ policy = [queue |-> <<k1>>]\n/\\ evictable = 1\n/\\ free = 0\n"
        "/\\ entries = (k1 :> [size |-> 1, pins |-> 0])\n"
        f"/\\ door = {door}\n"
        f'/\\ lastOp = [n |-> 1, op |-> "{op}", key |-> {key}]'
    )


DOORKEEPER = AllocRule(admission="doorkeeper", door_capacity=1)


@pytest.mark.parametrize("rule", [DOORKEEPER, replace(DOORKEEPER, admission=DoorkeeperForgets)])
def test_a_decline_returns_none_and_the_door_is_read_like_the_spec(rule: AllocRule) -> None:
    s = _run(rule.state(1, "fifo"), [("alloc", "k1", 1), ("mark_ready", "k1")])
    assert abstract_state(s) == spec_abstract(_door_state("<<>>", "MarkReady", "k1"))
    before = abstract_state(s)
    declined = REAL_OPERATIONS["alloc"](s, "k2", 1)
    assert result_kind(declined, "AllocDecline") == "none"
    assert expected_result("AllocDecline", before, "k2") == "none"
    # The door holds one key: k3's decline pushes k2 out (the oldest leaves).
    REAL_OPERATIONS["alloc"](s, "k3", 1)
    spec = spec_abstract(_door_state("<<k3>>", "AllocDecline", "k3"))
    if rule.admission is DoorkeeperForgets:  # forgets every decline: the door stays empty
        assert abstract_state(s) != spec and abstract_state(s).door == ()
    else:
        assert abstract_state(s) == spec and spec.door == ("k3",)


def test_without_a_filter_neither_side_has_a_door() -> None:
    assert abstract_state(CacheState(1)).door == ()
    assert spec_abstract(TINY.states["0"]).door == ()


def test_the_rule_comes_from_the_manifest_entry_and_must_match_the_config() -> None:
    entry = {"name": "M", "admission": "doorkeeper", "rule_params": {"DoorCapacity": 2}}
    rule = rule_of_entry(entry)
    assert rule == AllocRule(admission="doorkeeper", door_capacity=2) and not rule.block_exact
    door = rule.state(4, "fifo").admission
    assert isinstance(door, Doorkeeper) and door.capacity == 2
    assert check_rule(rule, {"DoorCapacity": "2", "N": "4"}) is None
    assert "DoorCapacity is 1" in str(check_rule(rule, {"DoorCapacity": "1"}))
    assert "DoorCapacity is None" in str(check_rule(rule, {}))
    contiguous = rule_of_entry({"allocator": "extents", "rule_params": {"Contiguity": 1}})
    assert contiguous == CONTIGUOUS and contiguous.block_exact
    assert contiguous.state(3, "fifo").contiguity == 1
    assert check_rule(contiguous, {"Contiguity": "1"}) is None
    # A config with a rule the entry does not name is a difference too.
    assert rule_of_entry({}) == SEED_RULE and check_rule(SEED_RULE, {"Contiguity": "0"}) is None
    assert "Contiguity is 1" in str(check_rule(SEED_RULE, {"Contiguity": "1"}))
    assert "DoorCapacity is 1" in str(check_rule(SEED_RULE, {"DoorCapacity": "1"}))
    with pytest.raises(ValueError, match="unknown admission filter 'tinylfu'"):
        rule_of_entry({"admission": "tinylfu"})
    with pytest.raises(ValueError, match=r"unknown rule_params \['window'\]"):
        rule_of_entry({"rule_params": {"Window": 3}})


def test_a_bug_of_an_alloc_rule_is_not_replayed_on_a_model_of_another_rule() -> None:
    dump = DumpedModel("TINY", TINY, TINY_KEYS, TINY_N, TINY_MAX_PINS, 0.0)
    with pytest.raises(ValueError, match="ForgetsDoor runs with filter 'doorkeeper'"):
        planted_replay(by_name("ForgetsDoor"), "fifo", dump)
    with pytest.raises(ValueError, match="ContiguityNever runs with filter None and contiguity 1"):
        planted_replay(by_name("ContiguityNever"), "fifo", dump)


# ---------------------------------------------------------------- policies, read like the code


def _run(s: CacheState, calls: list[tuple[Any, ...]]) -> CacheState:
    for op, *args in calls:
        REAL_OPERATIONS[op](s, *args)
    return s


#: Keys k1 (1 block) and k2 (2 blocks) made ready, k1 used once; then k3 (3 blocks) evicts both.
_CALLS: list[tuple[Any, ...]] = [
    ("alloc", "k1", 1),
    ("mark_ready", "k1"),
    ("alloc", "k2", 2),
    ("mark_ready", "k2"),
    ("pin", "k1"),
    ("unpin", "k1"),
]


def test_gdsf_state_is_read_like_the_code() -> None:
    s = _run(CacheState(3, GdsfPolicy(3, scale=2, max_freq=2)), _CALLS)
    # What TLC prints for the same state of EmbeddingCacheGdsf (Scale 2, MaxFreq 2):
    # k2 joined at 0 + 2*1 div 2 = 1, k1 rejoined at 0 + 2*2 div 1 = 4.
    spec = parse_state(
        "/\\ entries = (k1 :> [blocks |-> {0}, pins |-> 0]\n"
        "                 @@ k2 :> [blocks |-> {1, 2}, pins |-> 0])\n"
        "/\\ free = {}\n/\\ evictable = 3\n"
        "/\\ prio = (k1 :> 4 @@ k2 :> 1)\n/\\ freq = (k1 :> 2 @@ k2 :> 1)\n"
        "/\\ order = <<k2, k1>>\n/\\ clock = 0\n"
        '/\\ lastOp = [op |-> "Unpin", key |-> k1, n |-> 0]'
    )
    names = ("clock", "freq", "order", "prio")
    assert spec_abstract(spec, names) == abstract_state(s)
    # Any policy variable that differs makes the states differ.
    for name, value in (("clock", "1"), ("order", "<<k1, k2>>"), ("freq", "(k1 :> 1 @@ k2 :> 1)")):
        changed = dict(spec)
        changed[name] = parse_state(f"/\\ {name} = {value}")[name]
        assert spec_abstract(changed, names) != abstract_state(s), name


def test_s3fifo_state_is_read_like_the_code() -> None:
    s = _run(CacheState(3, S3FifoPolicy(3)), [*_CALLS, ("alloc", "k3", 3)])
    # k1 was used, so S's head k1 moved to M; k2 (unused) was evicted into the ghost;
    # then M's k1 (counter cleared on promotion) was evicted.
    assert s.checks.abstract()["ghost"] == (("k2", 2),)
    spec = parse_state(
        "/\\ entries = (k3 :> [blocks |-> {0, 1, 2}, pins |-> -1])\n"
        "/\\ free = {}\n/\\ evictable = 0\n"
        "/\\ small = <<>>\n/\\ main = <<>>\n/\\ ghost = <<<<k2, 2>>>>\n"
        '/\\ freq = << >>\n/\\ home = (k3 :> "S")\n'
        '/\\ lastOp = [op |-> "Alloc", key |-> k3, n |-> 3]'
    )
    names = ("freq", "ghost", "home", "main", "small")
    assert spec_abstract(spec, names) == abstract_state(s)


def test_policy_variables_may_be_fields_of_one_record_variable() -> None:
    # tla/: the policy's state is the record variable ``policy`` ([queue |-> ...] for fifo).
    flat = parse_state(
        "/\\ entries = (k1 :> [blocks |-> {0}, pins |-> 0])\n/\\ free = {}\n"
        "/\\ queue = <<k1>>\n/\\ evictable = 1"
    )
    record = parse_state(
        "/\\ entries = (k1 :> [blocks |-> {0}, pins |-> 0])\n/\\ free = {}\n"
        "/\\ policy = [queue |-> <<k1>>]\n/\\ evictable = 1"
    )
    assert spec_abstract(record) == spec_abstract(flat)
    assert spec_abstract(record).queue == ("k1",)


def test_a_missing_policy_variable_is_an_error_not_a_pass() -> None:
    state = TINY.states["0"]
    with pytest.raises(KeyError, match="no policy variable 'prio'"):
        spec_abstract(state, ("prio",))


def test_policy_parameters_from_the_manifest() -> None:
    # gdsf's constants are constructor parameters; s3fifo's are derived from N.
    assert code_params("gdsf", {"Scale": 2, "MaxFreq": 3}) == {"scale": 2, "max_freq": 3}
    assert code_params("s3fifo", {"SmallTarget": 1, "GhostCapacity": 2}) == {}
    gdsf = make_policy(policy_factory("gdsf", {"Scale": 2, "MaxFreq": 3}), 3)
    assert isinstance(gdsf, GdsfPolicy) and (gdsf.scale, gdsf.max_freq) == (2, 3)
    assert policy_factory("fifo", {}) == "fifo"
    s3 = make_policy("s3fifo", 3)
    assert check_constants(s3, {"SmallTarget": "1", "GhostCapacity": "2"}) is None
    assert check_constants(s3, {"GhostCapacity": 3}) == (
        "GhostCapacity is 3 in the model but 2 in the code's s3fifo"
    )
    with pytest.raises(ValueError, match="unknown eviction policy"):
        policy_factory("lru", {})


def test_a_constant_is_the_code_attribute_of_its_snake_case_name() -> None:
    assert [code_name(c) for c in ("Scale", "MaxFreq", "SmallTarget", "max_freq")] == [
        "scale",
        "max_freq",
        "small_target",
        "max_freq",
    ]
    gdsf = make_policy(policy_factory("gdsf", {"Scale": 8, "MaxFreq": 3}), 4)
    assert code_constants(gdsf, ("Scale", "MaxFreq")) == {"Scale": 8, "MaxFreq": 3}
    with pytest.raises(ValueError, match=r"no integer attribute \['small_target'\]"):
        code_constants(gdsf, ("SmallTarget",))
    # The core's constants (N, Keys, MaxPins) are no policy's: never compared.
    assert check_constants(gdsf, {"N": 3, "MaxPins": 2, "Keys": "{k1}", "Scale": 8}) is None


def test_model_policy_from_either_manifest_list(tmp_path: Path) -> None:
    (tmp_path / "models.json").write_text(
        '{"models": [{"name": "A", "policy": "gdsf", "policy_params": {"Scale": 2}}],'
        ' "replay_models": [{"name": "B", "policy": "s3fifo"}, {"name": "C", "policy": null}]}'
    )
    assert model_policy(tmp_path, "A") == ("gdsf", {"Scale": 2})
    assert model_policy(tmp_path, "B") == ("s3fifo", {})
    assert model_policy(tmp_path, "C") == ("fifo", {})  # the core's models replay as fifo
    assert model_policy(tmp_path, "unlisted") == ("fifo", {})


@pytest.mark.parametrize("bug", for_policy("gdsf", "replay")[-1:], ids=lambda b: b.name)
def test_clone_keeps_a_planted_policy_class(bug: PlantedBug) -> None:
    s = bug.state(3, "gdsf")
    twin = clone(s)
    assert type(twin.policy) is type(s.policy) is bug.broken_policy
    assert twin.policy is not s.policy and abstract_state(twin) == abstract_state(s)


def test_clone_keeps_a_planted_filter_class() -> None:
    # The replay clones the code's state at every step: a broken doorkeeper that came
    # back as the real one would leave the bug unreplayed after the first step.
    bug = by_name("ForgetsDoor")
    s = bug.state(3)
    twin = clone(s)
    assert bug.broken_admission is not None and twin.admission is not None
    assert type(twin.admission) is type(s.admission) is bug.broken_admission
    assert twin.admission is not s.admission and abstract_state(twin) == abstract_state(s)
    twin.admission.declined("k1")  # the broken filter's: it remembers nothing
    assert abstract_state(twin).door == ()


# ---------------------------------------------------------------- real graphs (TLC)

#: Planted bugs MCSmoke (2 keys) cannot show: each needs an eviction while a
#: third entry is queued or held besides the victim and the key being allocated.
NEEDS_THREE_KEYS = frozenset({"EvictBeforeFailFast", "EvictNewest"})


def _dump(tla_dir: Path, model: str) -> DumpedModel:
    spec = model_files(tla_dir, model)[0]
    if not (tla_dir / spec).is_file():
        pytest.fail(f"tla/{spec} is missing: the root of replay model {model} (tla/models.json)")
    return dump_state_graph(tla_dir, model, tlc_workers())


@pytest.fixture(scope="module")
def smoke(tla_dir: Path) -> Iterator[DumpedModel]:
    """MCSmoke's state graph, dumped once for this module (TLC ~2-4 s)."""
    yield _dump(tla_dir, "MCSmoke")


_DUMPS: dict[str, DumpedModel] = {}
#: Every policy's plan, from tla/models.json.
PLANS = load_plans(find_tla_dir())


@pytest.fixture(scope="module", params=sorted(PLANS))
def planted_model(request: pytest.FixtureRequest, tla_dir: Path) -> Iterator[DumpedModel]:
    """Each policy's planted-bug replay model (fifo's MCReplayWide: TLC ~15-35 s)."""
    name = PLANS[request.param].planted
    if name not in _DUMPS:
        _DUMPS[name] = _dump(tla_dir, name)
    yield _DUMPS[name]
    _DUMPS.pop(name, None)


def _replay(model: DumpedModel) -> GraphReplayReport:
    return replay_any_graph(
        model.graph,
        model.keys,
        model.num_blocks,
        model.max_pins,
        policy=policy_factory(model.policy, model.policy_params),
        rule=model.rule,
    )


@pytest.mark.tlc
def test_replay_models_are_listed_with_their_policy(tla_dir: Path) -> None:
    for policy, plan in PLANS.items():
        for model in (*plan.full_replay, *plan.bounded_replay, plan.planted):
            assert model_policy(tla_dir, model)[0] == policy, model


@pytest.mark.tlc
def test_smoke_graph_is_the_expected_model(smoke: DumpedModel) -> None:
    assert (smoke.keys, smoke.num_blocks, smoke.max_pins) == (["k1", "k2"], 3, 2)
    assert smoke.policy == "fifo"
    assert len(smoke.graph.states) == 2293  # TLC: "2293 distinct states found"
    assert len(smoke.graph.edges) == 11848  # every generated step but Init's
    assert len(smoke.graph.initial) == 1


@pytest.mark.tlc
def test_smoke_every_edge_replays_on_the_real_transitions(smoke: DumpedModel) -> None:
    report = _replay(smoke)
    assert report.mismatches == []
    assert report.edges_replayed == report.edges_total == len(smoke.graph.edges)
    assert report.disabled_checked > 0
    assert report.ok


@pytest.mark.tlc
def test_each_policy_replays_its_model_on_the_real_code(planted_model: DumpedModel) -> None:
    report = _replay(planted_model)
    assert report.mismatches == [], report.mismatches[:3]
    assert report.edges_replayed == report.edges_total > 0
    assert report.disabled_checked > 0 and report.policy == planted_model.policy


#: The bugs replayed on fifo's core models: not those of a lease transition or of an
#: alloc rule, which are replayed on their rule's replay input.
FIFO_PLAN = PLANS["fifo"]
CORE_REPLAY_BUGS = [
    b for b in for_policy("fifo", "replay") if replay_model(b, FIFO_PLAN) == FIFO_PLAN.planted
]


@pytest.mark.tlc
@pytest.mark.parametrize("bug", CORE_REPLAY_BUGS, ids=lambda b: b.name)
def test_smoke_replay_catches_each_planted_bug_it_can_show(
    smoke: DumpedModel, bug: PlantedBug
) -> None:
    caught, detail = planted_replay(bug, "fifo", smoke)
    if bug.name in NEEDS_THREE_KEYS:
        assert not caught, f"MCSmoke now shows this bug ({detail}): drop it from NEEDS_THREE_KEYS"
        return
    assert caught, detail
    # The first divergence is a call of the broken transition, not a knock-on effect.
    assert detail.startswith(f"MCSmoke: {bug.transition}("), detail


@pytest.mark.tlc
def test_each_policys_model_catches_every_planted_bug_of_that_policy(
    planted_model: DumpedModel,
) -> None:
    policy = planted_model.policy
    missed, elsewhere = [], []
    for bug in for_policy(policy, "replay"):
        if replay_model(bug, PLANS[policy]) != planted_model.name:
            continue  # a lease bug: replayed on the lease replay input (below)
        caught, detail = planted_replay(bug, policy, planted_model)
        if not caught:
            missed.append(bug.name)
        elif not detail.startswith(f"{planted_model.name}: {bug.transition}("):
            elsewhere.append(f"{bug.name}: {detail}")
    assert not missed, f"{policy}: replay missed {missed}"
    assert not elsewhere, elsewhere


@pytest.fixture(scope="module", params=sorted(PLANS))
def lease_model(request: pytest.FixtureRequest, tla_dir: Path) -> Iterator[DumpedModel]:
    """Each policy's lease replay input (MCReplayLease<Policy>: TLC ~30-40 s)."""
    name = PLANS[request.param].planted_lease
    assert name is not None, f"{request.param} has no lease replay input"
    yield _dump(tla_dir, name)


@pytest.mark.tlc
def test_each_policy_replays_its_lease_model_on_the_real_code(lease_model: DumpedModel) -> None:
    report = _replay(lease_model)
    assert report.mismatches == [], report.mismatches[:3]
    assert report.edges_replayed == report.edges_total > 100_000
    # Several leases due at once (the code's one expiry call), refusals (plain unpin of
    # leased pins among them).
    assert report.batch_expiries > 0 and report.disabled_checked > 0
    policy = lease_model.policy
    missed = [
        bug.name
        for bug in for_policy(policy, "replay")
        if replay_model(bug, PLANS[policy]) == lease_model.name
        and not planted_replay(bug, policy, lease_model)[0]
    ]
    assert not missed, f"{policy}: the lease replay missed {missed}"
    blind = {b.name for b in for_policy(policy) if b.transition in LEASE_OPERATIONS} - {
        b.name for b in for_policy(policy, "replay")
    }
    assert blind == {"ExpireNotDue"}  # its stale heap pair has no spec state (WHY_BLIND)


# ---------------------------------------------------------------- the alloc rules' graphs (TLC)

#: Each policy's replay input of each alloc rule, as (policy, rule).
RULE_MODELS = [(policy, rule) for policy in sorted(PLANS) for rule in ("admission", "contiguity")]


def _rule_model_name(policy: str, rule: str) -> str:
    plan = PLANS[policy]
    name = plan.planted_admission if rule == "admission" else plan.planted_contiguity
    assert name is not None, f"{policy} has no {rule} replay input"
    return name


@pytest.fixture(scope="module", params=RULE_MODELS, ids=lambda p: f"{p[0]}-{p[1]}")
def rule_model(request: pytest.FixtureRequest, tla_dir: Path) -> Iterator[DumpedModel]:
    """Each policy's MCReplayAdmission<Policy> and MCReplayContiguity<Policy> (TLC ~5-30 s)."""
    yield _dump(tla_dir, _rule_model_name(*request.param))


def _declines_at_a_full_door(graph: StateGraph) -> int:
    """The AllocDecline edges from a state whose door is not empty: it holds another key
    (a key at the door is let in), so a door of capacity 1 is full and its oldest key
    leaves."""
    return sum(
        1
        for source, target, _ in graph.edges
        if last_op(graph.states[target])[0] == "AllocDecline" and graph.states[source]["door"]
    )


@pytest.mark.tlc
def test_each_policy_replays_its_alloc_rule_models_on_the_real_code(
    rule_model: DumpedModel,
) -> None:
    report = _replay(rule_model)
    assert report.mismatches == [], report.mismatches[:3]
    assert report.ok and report.policy == rule_model.policy
    assert report.edges_replayed > 0 and report.disabled_checked > 0
    if rule_model.rule.admission is not None:  # every edge, AllocDecline ones among them
        assert rule_model.rule == AllocRule(admission="doorkeeper", door_capacity=1)
        assert not report.block_exact and report.edges_replayed == report.edges_total
        assert report.states_reached == report.states
        assert _declines_at_a_full_door(rule_model.graph) > 0
    else:  # block-exact: the code's choices of ids, and other choices the spec allows
        assert rule_model.rule == AllocRule(allocator="extents", contiguity=1)
        assert report.block_exact and report.edges_other_choice > 0
        assert 0 < report.states_reached <= report.states
        assert report.edges_replayed + report.edges_other_choice + report.edges_unreached == (
            report.edges_total
        )


@pytest.mark.tlc
def test_each_alloc_rule_model_catches_every_planted_bug_of_its_rule(
    rule_model: DumpedModel,
) -> None:
    policy, name, admission = rule_model.policy, rule_model.name, rule_model.rule.admission
    # The bugs of this rule alone (those of both rules at once, planted/combined.py, have
    # no replay input: WHY_BLIND).
    of_rule = {
        b.name
        for b in for_policy(policy)
        if (b.admission is not None) == (admission is not None)
        and (b.contiguity > 0) == (admission is None)
    }
    replayed = [b for b in for_policy(policy, "replay") if replay_model(b, PLANS[policy]) == name]
    assert {b.name for b in replayed} == of_rule and of_rule  # the replay must catch them all
    missed, elsewhere = [], []
    for bug in replayed:
        caught, detail = planted_replay(bug, policy, rule_model)
        if not caught:
            missed.append(bug.name)
        elif not detail.startswith(f"{name}: alloc("):  # the broken alloc (or filter) shows
            elsewhere.append(f"{bug.name}: {detail}")
    assert not missed, f"{policy}: the replay of {name} missed {missed}"
    assert not elsewhere, elsewhere
