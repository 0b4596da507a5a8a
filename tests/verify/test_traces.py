"""Trace validation (conformance link 2): the generated TLA+ module, then TLC's verdicts.

The unit tests read ``trace_module``'s text back with the project's own TLA+
value parser. The ``tlc`` tests (each TLC run costs ~2-4 s) check that TLC
accepts traces of the real cache -- from the Hypothesis state machine of
tests/test_stateful.py, a threaded workload and a script with awkward keys --
and rejects, at exactly the right step, a trace recorded with a planted bug
and traces tampered with by hand.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import run_state_machine_as_test
from test_stateful import CacheMachine  # tests/ is on sys.path (pytest rootdir conftest)

from embedding_cache.abstraction import AbstractEntry, AbstractState
from embedding_cache.errors import CacheError
from embedding_cache.tlc.config import parse_config
from embedding_cache.tracing import TracedEmbeddingCache, TraceStep
from embedding_cache.verify import planted_links
from embedding_cache.verify.planted import PLANTED
from embedding_cache.verify.tla_values import TlaFunction, TlaValue, parse_value
from embedding_cache.verify.traces import TraceVerdict, tla_string, trace_module, validate_trace
from embedding_cache.verify.workloads import random_trace, threaded_trace

#: What a step that did not raise records as its result.
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
    """TraceKeys and Trace of a generated module, read by parse_value."""
    keys = re.search(r"^TraceKeys == (.*)$", module, re.M)
    steps = re.search(r"^Trace == (<<.*>>)\s*^====", module, re.M | re.S)
    assert keys is not None and steps is not None, module
    return parse_value(keys.group(1)), parse_value(steps.group(1))


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


# ---------------------------------------------------------------- TLC verdicts


def _rejected_at(verdict: TraceVerdict, trace: Sequence[TraceStep], index: int) -> None:
    """The verdict rejects ``trace`` at step ``index`` (0-based), having matched all before it."""
    assert not verdict.accepted, "TLC accepted a trace it must reject"
    assert verdict.detail == "deadlock", verdict.detail  # a verdict, not a TLC failure
    assert verdict.matched == index, (verdict.matched, verdict.first_rejected)
    assert verdict.first_rejected == trace[index]


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

    def teardown(self) -> None:
        cache = self.cache
        assert isinstance(cache, TracedEmbeddingCache)
        if not cache.trace:
            return  # Hypothesis's first example takes no step: nothing for TLC to judge
        verdict = validate_trace(cache.trace, cache.num_blocks, self.tla_dir)
        type(self).verdicts.append(verdict)
        type(self).traces.append(list(cache.trace))
        assert verdict.accepted, (
            f"TLC rejected step {verdict.matched + 1}: {verdict.first_rejected} {verdict.detail}"
        )


#: Each example costs one TLC run (~1-4 s), so few examples of modest length;
#: no shrinking (every shrink step would start TLC again), the verdict names the step.
TRACED_MACHINE_SETTINGS = settings(
    max_examples=5,
    stateful_step_count=30,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)


@pytest.mark.tlc
def test_state_machine_traces_are_accepted(tla_dir: Path) -> None:
    TracedCacheMachine.tla_dir = tla_dir
    TracedCacheMachine.verdicts.clear()
    TracedCacheMachine.traces.clear()
    run_state_machine_as_test(TracedCacheMachine, settings=TRACED_MACHINE_SETTINGS)
    verdicts, traces = TracedCacheMachine.verdicts, TracedCacheMachine.traces
    assert verdicts and all(v.accepted for v in verdicts)
    steps = [s for t in traces for s in t]
    assert sum(v.steps for v in verdicts) == len(steps) > 0
    # Misuse is validated too: some steps were refusals the spec had to forbid.
    assert any(s.result not in SUCCESS_RESULTS for s in steps)


@pytest.mark.tlc
def test_threaded_trace_is_accepted(tla_dir: Path) -> None:
    cache = threaded_trace(seed=5, steps=25)
    threads = {step.thread for step in cache.trace}
    assert len(threads) > 1, threads
    verdict = validate_trace(cache.trace, cache.num_blocks, tla_dir)
    assert verdict.accepted, (verdict.matched, verdict.first_rejected, verdict.detail)
    assert verdict.matched == verdict.steps == len(cache.trace)


@pytest.mark.tlc
def test_planted_bug_trace_is_rejected_at_its_first_divergence(tla_dir: Path) -> None:
    bug = next(b for b in PLANTED if planted_links.short_name(b) == "pin_if_ready_pins_not_ready")
    seed, steps = 1, 40
    cache = random_trace(seed, steps=steps, operations=planted_links.operations_with(bug))
    broken = cache.trace
    # random_trace draws its calls independently of their results, so the real
    # cache with the same seed makes the same calls: the first step recorded
    # differently is where the bug shows, and where TLC must stop.
    real = random_trace(seed, steps=steps).trace
    diverges = next(i for i, (a, b) in enumerate(zip(broken, real, strict=True)) if a != b)
    assert broken[diverges].op == bug.transition
    verdict = validate_trace(broken, cache.num_blocks, tla_dir)
    _rejected_at(verdict, broken, diverges)
    assert verdict.first_rejected is not None and verdict.first_rejected.op == bug.transition


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
    trace[i] = trace[i]._replace(post=post._replace(queue=post.queue[::-1]))
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
def test_wrong_success_result_is_rejected(tla_dir: Path, accepted_trace: list[TraceStep]) -> None:
    trace = list(accepted_trace)
    i = _first(trace, "mark_ready", "ok")
    trace[i] = trace[i]._replace(result="entry")  # mark_ready returns None, never an entry
    _rejected_at(validate_trace(trace, 4, tla_dir), trace, i)
