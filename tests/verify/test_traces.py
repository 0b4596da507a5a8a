"""Trace validation (conformance link 2): the generated TLA+ modules, then TLC's verdicts.

The unit tests read ``trace_module``'s text back with the project's own TLA+
value parser, for every policy, and check the generated ``TracePolicy``. The
``tlc`` tests (each TLC run costs ~2-4 s) check that TLC accepts traces of the
real cache under each policy -- from the Hypothesis state machine of
tests/test_stateful.py, a threaded workload and a script with awkward keys --
and rejects, at exactly the right step, a trace recorded with a planted bug
and traces tampered with by hand.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import re
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import run_state_machine_as_test
from test_stateful import CacheMachine  # tests/ is on sys.path (pytest rootdir conftest)

from embedding_cache import Doorkeeper, EmbeddingCache
from embedding_cache.errors import CacheError
from embedding_cache.policies import EVICTION_POLICIES, PolicySpec
from embedding_cache_checker.abstraction import AbstractEntry, AbstractState
from embedding_cache_checker.tlc.config import parse_config
from embedding_cache_checker.tlc.manifest import find_tla_dir
from embedding_cache_checker.tracing import TracedEmbeddingCache, TraceStep
from embedding_cache_checker.verify.alloc_rule import SEED_RULE, AllocRule, rule_of_cache
from embedding_cache_checker.verify.model_code import policy_factory, policy_variables
from embedding_cache_checker.verify.plans import load_plans
from embedding_cache_checker.verify.planted import PlantedBug, by_name, for_policy
from embedding_cache_checker.verify.planted_recording import planted_eviction, planted_recordings
from embedding_cache_checker.verify.planted_validation import validate_planted
from embedding_cache_checker.verify.spec_read import spec_abstract
from embedding_cache_checker.verify.step_traces import RULE_TRACES, trace_eviction
from embedding_cache_checker.verify.tla_values import TlaFunction, TlaValue, parse_value
from embedding_cache_checker.verify.traces import (
    TraceVerdict,
    policy_module,
    tla_string,
    trace_module,
    trace_policy_template,
    traces_module,
    validate_cache,
    validate_trace,
    validate_traces,
)
from embedding_cache_checker.verify.workloads import lease_trace, random_trace, threaded_trace

#: What a step that did not raise records as its result.
#: Every policy's plan, from tla/models.json.
PLANS = load_plans(find_tla_dir())
SUCCESS_RESULTS = frozenset({"ok", "none", "entry", "not-ready-entry"})

#: Keys that need escaping in a TLA+ string literal.
QUOTE_KEY = 'q"k'
BACKSLASH_KEY = "b\\s"


def _scripted_trace() -> TracedEmbeddingCache:
    """A short fixed trace on 4 blocks: every operation, eviction, nested pins and misuse."""
    cache = TracedEmbeddingCache(4)
    q, b = QUOTE_KEY, BACKSLASH_KEY
    cache.alloc(q, 2)
    cache.alloc(b, 1)
    cache.pin_if_ready(b)  # not ready yet: a query
    cache.mark_ready(q)
    cache.mark_ready(b)
    cache.pin(q)
    cache.pin_if_ready(q)  # nested pin
    cache.unpin(q)
    cache.unpin(q)  # back on the queue, behind b
    for op, args in (
        ("alloc", (q, 1)),  # DuplicateAllocError
        ("unpin", (b,)),  # NotPinnedError
        ("discard", ("absent",)),  # UnknownKeyError
        ("alloc", ("big", 5)),  # CapacityError
    ):
        with pytest.raises(CacheError):
            getattr(cache, op)(*args)
    cache.alloc("c", 3)  # free 1: evicts b (oldest), then q
    cache.discard("c")
    return cache


# ---------------------------------------------------------------- the generated module


def _abstract_entries(value: TlaValue) -> dict[str, AbstractEntry]:
    """A post state's entries as written in the module: a function, or <<>> when empty."""
    if not isinstance(value, TlaFunction):
        assert value == (), value
        return {}
    out = {}
    for key, record in value.items():
        assert isinstance(record, TlaFunction)
        pins, blocks = record["pins"], record["blocks"]
        assert isinstance(pins, int) and isinstance(blocks, int)
        out[str(key)] = AbstractEntry(pins, blocks)
    return out


def _module_parts(module: str) -> tuple[TlaValue, TlaValue]:
    """TraceKeys and the one trace of a generated module's batch, read by parse_value."""
    keys = re.search(r"^TraceKeys == (.*)$", module, re.M)
    batch = re.search(r"^Traces == (<<.*>>)\s*^====", module, re.M | re.S)
    assert keys is not None and batch is not None, module
    traces = parse_value(batch.group(1))
    assert isinstance(traces, tuple) and len(traces) == 1, traces
    return parse_value(keys.group(1)), traces[0]


@pytest.mark.parametrize(
    ("text", "literal"),
    [
        ("k1", '"k1"'),
        ("", '""'),
        ('a"b', r'"a\"b"'),
        ("a\\b", r'"a\\b"'),
        ('\\"', r'"\\\""'),  # backslash first, then the quote: no double escaping
        ("café", '"café"'),
    ],
)
def test_tla_string_escapes_quotes_and_backslashes(text: str, literal: str) -> None:
    assert tla_string(text) == literal


@given(st.text(st.characters(min_codepoint=32, max_codepoint=126)))
def test_tla_string_round_trips_through_the_tlc_value_parser(text: str) -> None:
    assert parse_value(tla_string(text)) == text


def test_tla_string_escapes_line_breaks() -> None:
    assert "\n" not in tla_string("a\nb") and "\r" not in tla_string("a\rb")


def test_module_and_config_of_an_empty_trace() -> None:
    module, config = trace_module([], 3)
    assert module.startswith("---- MODULE TraceData ----\nEXTENDS Integers, TLC\n")
    assert module.rstrip().endswith("====")
    assert _module_parts(module) == (frozenset({"none"}), ())
    parsed = parse_config(config)
    assert parsed.constants == {
        "N": "3",
        "MaxPins": "1",
        "Keys": "<- TraceKeys",
        "Contiguity": "0",  # the seed's alloc rule (AllocRule.trace_constants)
        "Filtered": "FALSE",
        "DoorCapacity": "1",
    }
    assert parsed.invariants == ["TraceProgress"]
    assert "SPECIFICATION TraceSpec" in config


def test_module_carries_every_step_of_the_trace() -> None:
    trace = _scripted_trace().trace
    module, config = trace_module(trace, 4)
    keys, steps = _module_parts(module)
    assert keys == frozenset({QUOTE_KEY, BACKSLASH_KEY, "absent", "big", "c"})
    assert isinstance(steps, tuple) and len(steps) == len(trace)
    for record, step in zip(steps, trace, strict=True):
        assert isinstance(record, TlaFunction)
        assert record["op"] == step.op and record["key"] == step.key
        assert record["n"] == (step.n_blocks or 0) and record["result"] == step.result
        assert record["blocks"] == frozenset(step.block_ids or ())
        post = record["post"]
        assert isinstance(post, TlaFunction)
        assert _abstract_entries(post["entries"]) == dict(step.post.entries)
        assert post["queue"] == step.post.queue
        assert (post["free"], post["held"]) == (step.post.free, step.post.held)
    # MaxPins is the deepest nesting the trace reached (q pinned twice).
    assert parse_config(config).constants["MaxPins"] == "2"
    assert parse_config(config).constants["N"] == "4"


def _post_as_state(post: TlaValue) -> dict[str, TlaValue]:
    """A written ``post`` record as a spec state (entries' blocks and free as counts)."""
    assert isinstance(post, TlaFunction)
    return {str(k): v for k, v in post.items()}


@pytest.mark.parametrize("policy", list(EVICTION_POLICIES))
def test_module_writes_each_policys_variables(policy: str) -> None:
    eviction = trace_eviction(PLANS[policy])
    cache = random_trace(3, steps=120, eviction=eviction)
    module, config = trace_module(
        cache.trace, cache.num_blocks, eviction, PLANS[policy].tla_constants
    )
    _keys, steps = _module_parts(module)
    assert isinstance(steps, tuple) and len(steps) == len(cache.trace)
    names = policy_variables(eviction, cache.num_blocks)
    for record, step in zip(steps, cache.trace, strict=True):
        assert isinstance(record, TlaFunction)
        # Read back as the replay reads a spec state, the post is the code's abstract state.
        assert spec_abstract(_post_as_state(record["post"]), names) == step.post
    constants = parse_config(config).constants
    for name, value in {
        "gdsf": {"Scale": "8", "MaxFreq": "3"},
        "s3fifo": {"SmallTarget": "1", "GhostCapacity": "5"},
    }.get(policy, {}).items():
        assert constants[name] == value
    # The workload reaches the policy's interesting states.
    policies = [dict(s.post.policy) for s in cache.trace]
    if policy == "gdsf":
        assert any(p["clock"] for p in policies) and any(len(p["prio"]) > 1 for p in policies)
    if policy == "s3fifo":
        assert any(p["ghost"] for p in policies) and any(p["main"] for p in policies)


def test_trace_policy_module_selects_the_policy(tla_dir: Path) -> None:
    template = trace_policy_template(tla_dir)
    fifo = policy_module(template, PLANS["fifo"])
    assert fifo == template  # the shipped file is fifo's
    gdsf = policy_module(template, PLANS["gdsf"])
    assert "CONSTANTS Keys, N, MaxPins, Scale, MaxFreq\n" in gdsf
    assert 'INSTANCE EmbeddingCacheGdsf WITH Level <- "blocks"' in gdsf
    s3 = policy_module(template, PLANS["s3fifo"])
    assert "CONSTANTS Keys, N, MaxPins, SmallTarget, GhostCapacity\n" in s3
    assert "INSTANCE EmbeddingCacheS3Fifo " in s3
    with pytest.raises(ValueError, match="no CONSTANTS line"):
        policy_module("---- MODULE TracePolicy ----\n====\n", PLANS["gdsf"])


# ---------------------------------------------------------------- TLC verdicts


def _rejected_at(verdict: TraceVerdict, trace: Sequence[TraceStep], index: int) -> None:
    """The verdict rejects ``trace`` at step ``index`` (0-based), having matched all before it."""
    assert not verdict.accepted, "TLC accepted a trace it must reject"
    assert verdict.detail == "deadlock", verdict.detail  # a verdict, not a TLC failure
    assert verdict.matched == index, (verdict.matched, verdict.first_rejected)
    assert verdict.first_rejected == trace[index]


def _accepted(verdict: TraceVerdict, trace: Sequence[TraceStep]) -> None:
    assert verdict.accepted, (verdict.matched, verdict.first_rejected, verdict.detail)
    assert verdict.matched == verdict.steps == len(trace)


class TracedCacheMachine(CacheMachine):
    """tests/test_stateful.py's machine on a TracedEmbeddingCache; TLC judges each run's trace.

    The lockstep model comparison still runs after every step; at teardown the
    whole trace -- legal calls and refused misuse -- goes to TLC.
    """

    cache_class = TracedEmbeddingCache
    tla_dir: ClassVar[Path]
    verdicts: ClassVar[list[TraceVerdict]] = []
    traces: ClassVar[list[list[TraceStep]]] = []

    def bad_arguments(self, op: str, key: object, n_blocks: object) -> None:
        """Not a rule here: the spec has no malformed arguments; a trace holds only str keys."""

    # Not rules here either: the machine's clock moves by fractions of a second, and lease
    # traces need whole-number times (traces.unit_ticks). Lease traces are validated from
    # the lease streams instead (workloads.drive_leases, tests/verify/test_lease_traces.py).
    def lease(self, key: str, seconds: float) -> None:
        """Not a rule here (fractional times: see above)."""

    def release_lease(self, pick: int) -> None:
        """Not a rule here (fractional times: see above)."""

    def renew_lease(self, pick: int, seconds: float) -> None:
        """Not a rule here (fractional times: see above)."""

    def later(self, dt: float, op: str, key: str) -> None:
        """Not a rule here (the clock matters only to leases)."""

    def bad_lease_arguments(self, key: object, seconds: object, what: str, thing: str) -> None:
        """Not a rule here (fractional times: see above)."""

    def lease_life(self, pick: int, seconds: float, plain_pin: bool, dt: float, end: str) -> None:
        """Not a rule here (fractional times: see above)."""

    def teardown(self) -> None:
        cache = self.cache
        assert isinstance(cache, TracedEmbeddingCache)
        if not cache.trace:
            return  # Hypothesis's first example takes no step: nothing for TLC to judge
        verdict = validate_cache(cache, self.tla_dir)
        type(self).verdicts.append(verdict)
        type(self).traces.append(list(cache.trace))
        assert verdict.accepted, (
            f"TLC rejected step {verdict.matched + 1}: {verdict.first_rejected} {verdict.detail}"
        )


#: The parameters the machines draw: gdsf's default scale (2**32) is beyond TLC's integers.
#: Any other policy: its plan's trace parameters (those its clean traces are recorded with,
#: so a policy whose defaults TLC cannot hold, as density's scale 2**32, is traced at
#: the sizes its policy.json gives), found from the registry.
MACHINE_PARAMS = {
    "gdsf": st.sampled_from([{"scale": 2, "max_freq": 2}, {"scale": 8, "max_freq": 3}])
}


def _machine_params(policy: str) -> st.SearchStrategy[dict[str, int]]:
    drawn = MACHINE_PARAMS.get(policy)
    return drawn if drawn is not None else st.just(dict(PLANS[policy].trace_params))


def _machine(policy: str) -> type[TracedCacheMachine]:
    return type(
        f"TracedCacheMachine_{policy}",
        (TracedCacheMachine,),
        {
            "policy_class": EVICTION_POLICIES[policy],
            "params": _machine_params(policy),
            "verdicts": [],
            "traces": [],
        },
    )


#: Each example costs one TLC run (~1-4 s), so few examples of modest length (six: with
#: four, the ci profile drew no refused call for gdsf once the allocator became a draw);
#: no shrinking (every shrink step would start TLC again), the verdict names the step.
TRACED_MACHINE_SETTINGS = settings(
    max_examples=6,
    stateful_step_count=30,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)


@pytest.mark.tlc
@pytest.mark.parametrize("policy", list(EVICTION_POLICIES))
def test_state_machine_traces_are_accepted(tla_dir: Path, policy: str) -> None:
    machine = _machine(policy)
    machine.tla_dir = tla_dir
    run_state_machine_as_test(machine, settings=TRACED_MACHINE_SETTINGS)
    verdicts, traces = machine.verdicts, machine.traces
    assert verdicts and all(v.accepted for v in verdicts)
    steps = [s for t in traces for s in t]
    assert sum(v.steps for v in verdicts) == len(steps) > 0
    # Misuse is validated too: some steps were refusals the spec had to forbid.
    assert any(s.result not in SUCCESS_RESULTS for s in steps)


@pytest.mark.tlc
@pytest.mark.parametrize("policy", list(EVICTION_POLICIES))
def test_workload_traces_are_accepted(tla_dir: Path, policy: str) -> None:
    eviction = trace_eviction(PLANS[policy])
    cache = threaded_trace(seed=5, steps=25, eviction=eviction)
    threads = {step.thread for step in cache.trace}
    assert len(threads) > 1, threads
    _accepted(validate_cache(cache, tla_dir), cache.trace)
    cache = random_trace(seed=4, steps=300, eviction=eviction)
    _accepted(validate_cache(cache, tla_dir), cache.trace)


def _rerun(trace: Sequence[TraceStep], num_blocks: int, eviction: PolicySpec) -> list[TraceStep]:
    """The trace the real code records for the same calls (each step's op and arguments)."""
    cache = TracedEmbeddingCache(num_blocks, eviction)
    for step in trace:
        args = (step.key, step.n_blocks) if step.op == "alloc" else (step.key,)
        with contextlib.suppress(CacheError):
            getattr(cache, step.op)(*args)
    return cache.trace


def _first_divergence(broken: Sequence[TraceStep], real: Sequence[TraceStep]) -> int:
    """The first step the two traces record differently (the thread names aside)."""
    return next(
        i
        for i, (a, b) in enumerate(zip(broken, real, strict=True))
        if a._replace(thread="") != b._replace(thread="")
    )


def _policy_bug(policy: str) -> PlantedBug:
    """The first planted bug of ``policy``'s own order rule that trace validation must catch."""
    return next(
        b for b in for_policy(policy, "traces") if b.policy == policy and b.kind == "policy"
    )


#: (bug, policy): a shared transition bug, and one order-rule bug per policy.
TRACE_BUGS = [(by_name("PinIfReadyPinsNotReady"), "fifo")] + [
    (_policy_bug(policy), policy) for policy in EVICTION_POLICIES
]


@pytest.mark.tlc
@pytest.mark.parametrize(("bug", "policy"), TRACE_BUGS, ids=lambda x: getattr(x, "name", x))
def test_planted_bug_trace_is_rejected_at_its_first_divergence(
    tla_dir: Path, bug: PlantedBug, policy: str
) -> None:
    eviction = planted_eviction(bug, PLANS[policy])
    cache = random_trace(1, steps=400, operations=bug.operations(), eviction=eviction)
    broken = cache.trace
    # The workload's calls follow the results, so compare with the real code's record
    # of the very same calls: the first step recorded differently is where the bug
    # shows, and where TLC must stop.
    real = _rerun(
        broken,
        cache.num_blocks,
        policy_factory(policy, {**PLANS[policy].trace_params, **bug.params}),
    )
    diverges = _first_divergence(broken, real)
    assert broken[diverges].op == bug.transition, broken[diverges]
    _rejected_at(validate_cache(cache, tla_dir), broken, diverges)


@pytest.fixture(scope="module")
def accepted_trace(tla_dir: Path) -> list[TraceStep]:
    """The scripted trace, checked once: TLC accepts it (keys with quotes and backslashes)."""
    trace = _scripted_trace().trace
    verdict = validate_trace(trace, 4, tla_dir)
    assert verdict.accepted, (verdict.matched, verdict.first_rejected, verdict.detail)
    assert verdict.matched == len(trace)
    return trace


def _first(trace: Sequence[TraceStep], op: str, result: str) -> int:
    return next(i for i, s in enumerate(trace) if s.op == op and s.result == result)


def _tamper_result(trace: list[TraceStep]) -> int:
    i = _first(trace, "pin_if_ready", "not-ready-entry")
    trace[i] = trace[i]._replace(result="entry")  # claims it pinned a not-ready entry
    return i


def _tamper_error(trace: list[TraceStep]) -> int:
    i = _first(trace, "alloc", "DuplicateAllocError")
    trace[i] = trace[i]._replace(result="CapacityError")  # the wrong refusal
    return i


def _tamper_free(trace: list[TraceStep]) -> int:
    # The last successful alloc, the one that evicted.
    i = max(i for i, s in enumerate(trace) if s.op == "alloc" and s.result == "not-ready-entry")
    trace[i] = trace[i]._replace(post=trace[i].post._replace(free=trace[i].post.free + 1))
    return i


def _tamper_queue(trace: list[TraceStep]) -> int:
    # The first post state with two queued keys, in the other order.
    i = next(i for i, s in enumerate(trace) if len(s.post.queue) == 2)
    post: AbstractState = trace[i].post
    reordered = (("queue", post.queue[::-1]),)
    trace[i] = trace[i]._replace(post=post._replace(policy=reordered))
    return i


@pytest.mark.tlc
def test_scripted_trace_with_escaped_keys_is_accepted(accepted_trace: list[TraceStep]) -> None:
    assert {QUOTE_KEY, BACKSLASH_KEY} <= {s.key for s in accepted_trace}
    assert any(s.result not in SUCCESS_RESULTS for s in accepted_trace)


@pytest.mark.tlc
@pytest.mark.parametrize(
    "tamper",
    [_tamper_result, _tamper_error, _tamper_free, _tamper_queue],
    ids=["result", "error", "post-free", "post-queue"],
)
def test_tampered_step_is_rejected_exactly_there(
    tla_dir: Path, accepted_trace: list[TraceStep], tamper: object
) -> None:
    trace = list(accepted_trace)
    index = tamper(trace)  # type: ignore[operator]
    assert trace[index] != accepted_trace[index]
    _rejected_at(validate_trace(trace, 4, tla_dir), trace, index)


@pytest.mark.tlc
def test_a_batch_gives_each_trace_its_own_verdict(
    tla_dir: Path, accepted_trace: list[TraceStep]
) -> None:
    """One TLC run per pool size and kind, yet each trace judged alone: tampered traces
    beside good ones (two pool sizes, one lease trace) are each rejected exactly where
    they would be alone, and the good ones accepted."""
    tampered = [list(accepted_trace), list(accepted_trace)]
    at = [_tamper_free(tampered[0]), _tamper_result(tampered[1])]
    other = random_trace(5, steps=150)  # its own pool size: a second batch
    leases = lease_trace(1, steps=120).trace  # with lease steps: a third
    assert other.num_blocks != 4 and any(s.op == "lease" for s in leases)
    batch = [
        (accepted_trace, 4, SEED_RULE),
        (tampered[0], 4, SEED_RULE),
        (other.trace, other.num_blocks, SEED_RULE),
        (tampered[1], 4, SEED_RULE),
        (leases, 6, SEED_RULE),
    ]
    verdicts = validate_traces(batch, tla_dir, workers=2)
    assert len(verdicts) == len(batch)
    _accepted(verdicts[0], accepted_trace)
    _rejected_at(verdicts[1], tampered[0], at[0])
    _accepted(verdicts[2], other.trace)
    _rejected_at(verdicts[3], tampered[1], at[1])
    assert verdicts[4].accepted, verdicts[4].detail
    assert verdicts[0].seconds == verdicts[1].seconds  # one batch, one run


def test_a_batch_mixing_lease_and_plain_traces_is_refused() -> None:
    plain = _scripted_trace().trace
    with pytest.raises(ValueError, match="all with lease steps or all without"):
        traces_module([plain, lease_trace(1, steps=60).trace], 4)


@pytest.mark.tlc
def test_wrong_success_result_is_rejected(tla_dir: Path, accepted_trace: list[TraceStep]) -> None:
    trace = list(accepted_trace)
    i = _first(trace, "mark_ready", "ok")
    trace[i] = trace[i]._replace(result="entry")  # mark_ready returns None, never an entry
    _rejected_at(validate_trace(trace, 4, tla_dir), trace, i)


# ---------------------------------------------------------------- the alloc rules


def _door_grew(trace: Sequence[TraceStep]) -> bool:
    """Some step put a key at the door: the doorkeeper declined an alloc."""
    return any(len(b.door) > len(a.door) for a, b in itertools.pairwise(trace))


def _rule_of(keywords: dict[str, object]) -> AllocRule:
    """The alloc rule of a cache built with ``keywords`` (``RULE_TRACES``): its filter with
    the default door's capacity, its allocator and its k."""
    num_blocks, k = keywords["num_blocks"], keywords.get("contiguity", 0)
    assert isinstance(num_blocks, int) and isinstance(k, int)
    allocator = str(keywords.get("allocator", SEED_RULE.allocator))
    if not keywords.get("admission"):
        return AllocRule(allocator=allocator, contiguity=k)
    return AllocRule("doorkeeper", Doorkeeper(num_blocks).capacity, allocator, k)


@pytest.mark.tlc
@pytest.mark.parametrize("policy", list(EVICTION_POLICIES))
@pytest.mark.parametrize("rule", list(RULE_TRACES))
def test_each_alloc_rule_trace_is_accepted_and_the_rule_is_what_is_checked(
    tla_dir: Path, policy: str, rule: str
) -> None:
    """A trace recorded under the doorkeeper, contiguity or both is accepted by the trace
    spec under that rule, after the rule has acted (a decline; evictions other than the
    seed rule's); checked under the seed's rule, the same trace is rejected, and a trace
    of both rules is rejected under either rule alone too."""
    eviction = trace_eviction(PLANS[policy])
    keywords = RULE_TRACES[rule]
    cache = random_trace(1, steps=400, eviction=eviction, **keywords)
    expected = _rule_of(keywords)
    assert rule_of_cache(cache) == expected
    if expected.door_capacity is not None:
        assert _door_grew(cache.trace)
    if expected.contiguity:  # the same stream without contiguity goes otherwise
        unruled = {**keywords, "contiguity": 0}
        assert cache.trace != random_trace(1, steps=400, eviction=eviction, **unruled).trace
    wrong = [SEED_RULE]
    if expected.contiguity and expected.door_capacity is not None:
        wrong += [
            dataclasses.replace(expected, contiguity=0),
            dataclasses.replace(expected, admission=None, door_capacity=None),
        ]
    batch = [(cache.trace, cache.num_blocks, r) for r in [expected, *wrong]]
    right, *rejected = validate_traces(batch, tla_dir, eviction, workers=2)
    _accepted(right, cache.trace)
    for other, verdict in zip(wrong, rejected, strict=True):
        assert not verdict.accepted and verdict.detail == "deadlock", (other, verdict)


def _both_rules_trace(eviction: PolicySpec) -> TracedEmbeddingCache:
    """The doorkeeper with contiguity 1 on 5 blocks (spec/SPEC.md sections 13.1 and 14.1),
    scripted: a first request that fits in the free blocks, but only in pieces, would evict
    an extra victim, so it is declined; its retry is let in from the door and evicts that
    victim for a run; a first request that would evict a needed victim is declined; its
    retry is let in and evicts a needed victim, then an extra one. One-block entries of
    equal use, so every policy evicts them in the order they became ready."""
    cache = TracedEmbeddingCache(
        5, eviction, allocator="extents", admission="doorkeeper", contiguity=1
    )
    for key in "abcde":  # the extents pool hands out the highest ids first: a 4, ..., e 0
        cache.alloc(key, 1)
    cache.mark_ready("b")
    cache.discard("a")
    cache.discard("c")  # free {2, 4}: two blocks, no run of two
    assert cache.alloc("z", 2) is None  # fits in pieces, would evict b as an extra victim
    assert cache.alloc("z", 2) is not None  # let in from the door: evicts b for a run
    cache.mark_ready("e")
    cache.mark_ready("d")
    assert cache.alloc("x", 2) is None  # would evict e: declined, x joins the door
    assert cache.alloc("x", 2) is not None  # let in: evicts e (needed), then d for a run
    return cache


@pytest.mark.tlc
@pytest.mark.parametrize("policy", list(EVICTION_POLICIES))
def test_a_trace_of_both_rules_is_checked_under_both_and_rejected_under_either(
    tla_dir: Path, policy: str
) -> None:
    """The scripted trace of both rules is accepted under both, and rejected exactly where
    a single rule departs from it: the seed's, the doorkeeper's alone and contiguity's
    alone at the first decline, of an alloc that fit and would only have evicted an extra
    victim (the seed's and the doorkeeper's take it in pieces, contiguity's lets it in)."""
    eviction = trace_eviction(PLANS[policy])
    trace = _both_rules_trace(eviction).trace
    allocs = [i for i, step in enumerate(trace) if step.op == "alloc"]
    declined_extra, in_pieces, declined, let_in = allocs[-4:]
    assert trace[declined_extra].door == ("z",) and trace[in_pieces].door == ()
    assert [k for k, _ in trace[in_pieces].post.entries] == ["d", "e", "z"]  # b evicted
    assert trace[declined].door == ("x",) and trace[let_in].door == ()
    assert [k for k, _ in trace[let_in].post.entries] == ["x", "z"]  # e and d evicted
    both = AllocRule("doorkeeper", Doorkeeper(5).capacity, "extents", 1)
    door_only = dataclasses.replace(both, contiguity=0)
    rules = [both, SEED_RULE, door_only, AllocRule(allocator="extents", contiguity=1)]
    verdicts = validate_traces([(trace, 5, r) for r in rules], tla_dir, eviction, workers=2)
    _accepted(verdicts[0], trace)
    for verdict in verdicts[1:]:
        _rejected_at(verdict, trace, declined_extra)


def test_a_rule_the_trace_spec_lacks_is_refused() -> None:
    both = EmbeddingCache(4, allocator="extents", admission="doorkeeper", contiguity=1)
    assert rule_of_cache(both) == AllocRule("doorkeeper", Doorkeeper(4).capacity, "extents", 1)
    leases = lease_trace(1, steps=60).trace
    with pytest.raises(ValueError, match="seed's alloc rule only"):
        traces_module([leases], 6, rule=AllocRule(allocator="extents", contiguity=1))


@pytest.mark.tlc
def test_trace_validation_catches_each_planted_rule_bug(tla_dir: Path) -> None:
    """Every planted bug of admission, of contiguity and of both at once, under every
    policy it is a bug under, is caught by trace validation (the catalogue says it must
    be), in one call."""
    cases = [
        (bug, PLANS[policy], planted_recordings(bug, PLANS[policy]))
        for policy in EVICTION_POLICIES
        for bug in for_policy(policy, "traces")
        if bug.admission or bug.contiguity
    ]
    # 3 admission, 3 shared contiguity and 3 doorkeeper-with-contiguity bugs per policy
    assert len(cases) >= 4 * 9
    verdicts = validate_planted(cases, tla_dir, workers=2)
    pairs = zip(cases, verdicts, strict=True)
    missed = [(b.name, p.policy, note) for (b, p, _), (hit, note) in pairs if not hit]
    assert not missed, missed
