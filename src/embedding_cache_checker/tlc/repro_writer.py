"""``embedding-cache tlc --repro DIR MODEL``: a failing model's counterexample as a test.

TLC checks the model (``runner.run_model``); the behaviour it prints
(``output.parse_trace``) is read state by state (``verify.tla_values``) into
the code's terms, as the state-graph replay reads states (``verify.replay``:
the operation of each step from ``lastOp``, the spec's abstract state, what
the code's call must return), and written into DIR as a standalone pytest
module, ``test_<MODEL>.py``: the steps as the literals of a
``verify.counterexample_replay.Counterexample``, and a test that replays them on the code
with the model's policy (``policy``/``policy_params`` of tla/models.json),
checking every invariant and action property after each step and reporting
the first step where the code departs from the counterexample. It imports
only pytest and the installed distribution (the cache, and the checker's
``abstraction`` and ``verify.counterexample_replay`` that replay it). With
``EMBEDDING_CACHE_REPRO_BUG`` set to a planted bug's name (or ``linked``: the
bug the catalogue links to the model), it replays on that bug instead.

Who changed the spec learns whether the code has the defect a counterexample
shows (the test fails); who changed the code keeps a regression test.

A model of the cache's callers (tag ``protocol``: vLLM 0.33's callers and the
safe order, tla/protocol/) interleaves the callers' own steps (a check, a
dispatch, a grant) with its calls; a step that changes none of the cache's
variables (``lastOp`` included) made no call and is left out. Its finding is in
the callers, not in the cache (MCProtocolVllm: CheckedHitPinnedProp, a checked
hit evicted by the alloc of a computed item before it is pinned;
MCProtocolVllmSaves: SaveOfComputedProp, that hit re-allocated for a save of an
output never computed; MCProducerSessionOverwrite: GrantPinsInv, a re-granted
read's old pin held by no grant), so its test requires the real cache to follow
the counterexample to its end: there, the code's own answer shows the finding
(``Counterexample.callers``).
Only a finite behaviour of the spec's operations can be replayed: a
violated invariant or action property. A liveness counterexample (a lasso)
or a model whose states record no operation is refused (``ReproError``).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from embedding_cache.policies import make_policy

from ..abstraction import AbstractState
from ..verify.counterexample_replay import (
    LINKED,
    REPRO_BUG_ENV,
    Counterexample,
    CounterexampleReport,
    ReproStep,
    SpecState,
    replay,
)
from ..verify.model_code import check_constants, policy_factory, policy_variables
from ..verify.planted import for_tla_model
from ..verify.replay import ACTION_TO_OPERATION, expected_result
from ..verify.spec_read import last_op, spec_abstract
from ..verify.tla_values import TlaParseError, TlaValue, parse_value
from .config import read_config
from .counterexample import explain_failure, identify_violation
from .manifest import Model
from .output import CounterexampleState, TlcOutcome, parse_trace
from .process import LineSink
from .runner import ModelResult, run_model


class ReproError(Exception):
    """The model's run gives no counterexample a test can replay."""


def read_states(trace: Sequence[CounterexampleState]) -> list[dict[str, TlaValue]]:
    """Every state of a finite behaviour, its variables parsed. O(trace size).

    Raises:
        ReproError: the behaviour is not a plain sequence of states (a lasso's
            ``Back to state``, a stuttering step) or a value does not parse.
    """
    states = []
    for step in trace:
        if step.action.startswith("Back to") or step.action == "Stuttering":
            raise ReproError(f"the behaviour is not finite (state {step.number}: {step.action})")
        try:
            states.append({name: parse_value(text) for name, text in step.state.items()})
        except TlaParseError as exc:
            raise ReproError(f"state {step.number}: {exc}") from exc
    return states


#: The tag of a model of the cache's callers (module docstring).
PROTOCOL_TAG = "protocol"
#: The cache's variables: a step that changes none of them made no call on the cache.
CACHE_VARIABLES = ("entries", "free", "evictable", "lastOp", "policy")


def calls_only(states: Sequence[Mapping[str, TlaValue]]) -> list[Mapping[str, TlaValue]]:
    """The states of a behaviour without those reached by a step that made no call on the
    cache (a caller's own step: it changes none of ``CACHE_VARIABLES``). A call that
    changes nothing and repeats the previous call exactly (a failed alloc, a missed
    pin_if_ready) is left out too: it is a stutter of the cache, and its answer is the
    one just checked. O(trace size)."""
    kept = list(states[:1])
    for state in states[1:]:
        if any(state.get(v) != kept[-1].get(v) for v in CACHE_VARIABLES):
            kept.append(state)
    return kept


def _spec_state(state: Mapping[str, TlaValue], variables: tuple[str, ...]) -> SpecState:
    """A spec state as the code's is compared with it
    (``verify.counterexample_replay.SpecState``)."""
    evictable = state["evictable"]
    assert isinstance(evictable, int), evictable
    return SpecState(spec_abstract(state, variables), evictable)


def build_case(model: Model, result: ModelResult, tla_dir: Path) -> Counterexample:
    """The counterexample of a run of ``model`` (in ``tla_dir``) as the code replays it.
    O(trace size).

    Raises:
        ReproError: the run found no finite counterexample, the model has no policy
            (the core leaves victims open), its constants disagree with the code's
            policy, or its states record no operation of the cache (``lastOp``).
    """
    config = read_config(tla_dir / model.config)
    violation = identify_violation(result.raw_output, [tla_dir], config.properties)
    if violation is None:
        if result.output.outcome is TlcOutcome.PASS:
            raise ReproError("TLC found no counterexample: the model passes")
        raise ReproError(f"TLC reported no violation ({result.result})")
    if violation.kind == "temporal":
        raise ReproError("a liveness counterexample is a lasso, not a finite sequence of calls")
    # output.parse_output keeps the behaviour of a violation it names; a refinement
    # check reported by source position (counterexample.identify_violation) it does not.
    trace = result.output.trace or parse_trace(result.raw_output)
    if not trace:
        raise ReproError(f"TLC printed no behaviour ({violation.headline()})")
    if model.policy is None:
        raise ReproError("the model has no eviction policy: the core leaves the victims open")
    params = dict(model.policy_params)
    num_blocks = int(result.constants["N"])
    factory = policy_factory(model.policy, params)
    mismatch = check_constants(make_policy(factory, num_blocks), {**result.constants, **params})
    if mismatch is not None:
        raise ReproError(mismatch)
    states = read_states(trace)
    if any("lastOp" not in state for state in states):
        raise ReproError("the model's states do not record the operation (no lastOp)")
    variables = policy_variables(factory, num_blocks)
    called = calls_only(states)
    spec = [_spec_state(state, variables) for state in called]
    steps = []
    for before, state, after in zip(spec, called[1:], spec[1:], strict=False):
        action, key, n = last_op(state)
        if action not in ACTION_TO_OPERATION:
            raise ReproError(f"lastOp {action!r} is no operation of the cache")
        returns = expected_result(action, before.abstract, key)
        steps.append(ReproStep(action, key, n, returns, after))
    planted = for_tla_model(model.name)
    return Counterexample(
        model=model.name,
        violated=violation.name or result.result,
        checks=(*config.invariants, *config.properties),
        policy=model.policy,
        policy_params=params,
        num_blocks=num_blocks,
        initial=spec[0],
        steps=tuple(steps),
        planted=None if planted is None else planted.name,
        callers=PROTOCOL_TAG in model.tags,
    )


# ---------------------------------------------------------------- the test module


def _escape(text: str) -> str:
    """``text`` safe inside a triple-quoted docstring."""
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def _pairs(items: Sequence[Any], indent: str) -> str:
    """A tuple literal, one item per line (``()`` when empty)."""
    if not items:
        return "()"
    inner = "".join(f"{indent}    {item!r},\n" for item in items)
    return f"(\n{inner}{indent})"


def state_source(state: SpecState, indent: str) -> str:
    """The Python source of a ``SpecState`` literal, indented by ``indent``. O(state)."""
    a: AbstractState = state.abstract
    i2, i3 = indent + "    ", indent + "        "
    return (
        f"SpecState(\n"
        f"{i2}AbstractState(\n"
        f"{i3}entries={_pairs(a.entries, i3)},\n"
        f"{i3}policy={_pairs(a.policy, i3)},\n"
        f"{i3}free={a.free!r},\n"
        f"{i3}held={a.held!r},\n"
        f"{i2}),\n"
        f"{i2}evictable={state.evictable!r},\n"
        f"{indent})"
    )


def case_source(case: Counterexample) -> str:
    """The Python source of the ``Counterexample`` literal ``CASE``. O(trace size)."""
    steps = "".join(
        f"        # {number}. {step.call} -> {step.result}\n"
        f"        ReproStep(\n"
        f"            {step.action!r}, {step.key!r}, {step.n!r}, {step.result!r},\n"
        f"            {state_source(step.state, '            ')},\n"
        f"        ),\n"
        for number, step in enumerate(case.steps, start=1)
    )
    return (
        "CASE = Counterexample(\n"
        f"    model={case.model!r},\n"
        f"    violated={case.violated!r},\n"
        f"    checks={case.checks!r},\n"
        f"    policy={case.policy!r},\n"
        f"    policy_params={dict(case.policy_params)!r},\n"
        f"    num_blocks={case.num_blocks!r},\n"
        f"    initial={state_source(case.initial, '    ')},\n"
        f"    steps=(\n{steps}    ),\n"
        f"    planted={case.planted!r},\n"
        # Written only when set: a cache model's test reads as before the field existed.
        + (f"    callers={case.callers!r},\n" if case.callers else "")
        + ")\n"
    )


def render_test(case: Counterexample, model: Model, explanation: str) -> str:
    """The text of the test module for ``case`` (``explanation``: TLC's violation and
    counterexample, for the reader). O(trace size)."""
    bug = (
        f"{REPRO_BUG_ENV}={case.planted} (the bug planting this model's mistake, also "
        f"``{REPRO_BUG_ENV}={LINKED}``)"
        if case.planted
        else f"{REPRO_BUG_ENV}=<name> (the catalogue links no bug to this model)"
    )
    checks = ", ".join(case.checks)
    # The model's shape, then a bug model's defect (stated once, in the manifest).
    summary = " ".join(
        s if s.endswith(".") else f"{s}." for s in (model.description, model.defect) if s
    )
    about = (
        f"Generated by ``embedding-cache tlc --repro`` (regenerate, do not edit). The model "
        f"({case.policy}, {case.num_blocks} blocks) checks {checks}. "
        f"{summary} TLC reports {case.violated} violated after {len(case.steps)} "
        "steps."
    )
    what = (
        "The test makes the same calls on the real cache with the model's policy, checks "
        "every invariant and action property after each step, and reports the first step "
        "where the code's result or abstract state departs from the counterexample "
        "(``embedding_cache_checker.verify.counterexample_replay``). It passes while the code "
        "keeps them all. To run it on a planted bug of the catalogue "
        "(``embedding_cache_checker.verify.planted``) instead, "
        f"set {bug}."
    )
    if case.callers and case.steps:
        last = case.steps[-1]
        what += (
            " A model of the cache's callers: the finding is in their order of calls, so "
            "the test also requires the real cache to follow the counterexample to its end, "
            f"where the last call, {last.call}, answers {last.result} on the code as in "
            "the spec."
        )
    report = "\n".join(f"    {line}".rstrip() for line in explanation.splitlines())
    doc = (
        f"TLC's counterexample to {case.model}, replayed on the code.\n\n"
        f"{textwrap.fill(about, 88)}\n\n{textwrap.fill(what, 88)}\n\nTLC's report:\n\n{report}\n"
    )
    return f'''"""{_escape(doc)}"""

from __future__ import annotations

import pytest

from embedding_cache_checker.abstraction import AbstractEntry, AbstractState
from embedding_cache_checker.verify.counterexample_replay import (
    Counterexample,
    ReproStep,
    SpecState,
    replay,
)

{case_source(case)}

def test_counterexample_replayed_on_the_code(record_property):
    """The counterexample's calls on the code: every invariant and property holds after
    every step; where the code departs from the counterexample is reported."""
    report = replay(CASE)
    record_property("code", report.code)
    record_property("departure_step", "none" if report.departure is None else report.departure)
    print(report.text())
    if not report.ok:
        pytest.fail(report.text(), pytrace=False)
'''


def repro_path(directory: Path, model: str) -> Path:
    """Where the test of ``model`` is written. O(1)."""
    return directory / f"test_{model}.py"


# ---------------------------------------------------------------- the command


@dataclass
class ReproResult:
    """One model through ``--repro``: the test written, and its replay on the real code."""

    model: Model
    tlc: ModelResult
    path: Path | None = None
    case: Counterexample | None = None
    report: CounterexampleReport | None = None  # the replay on the real code
    error: str = ""

    @property
    def ok(self) -> bool:
        """True when the test was written. O(1)."""
        return self.path is not None

    def line(self) -> str:
        """One line for people. O(1)."""
        if self.path is None or self.case is None or self.report is None:
            return f"{self.model.name}: no test: {self.error}"
        at = self.report.departure
        where = "follows it to the end" if at is None else f"departs at step {at}"
        kept = "keeps every check" if self.report.ok else "BREAKS a check (the test fails)"
        bug = self.case.planted or "none linked"
        return (
            f"{self.model.name}: wrote {self.path} ({len(self.case.steps)} steps, "
            f"{self.case.violated}); the real code {where} and {kept}; planted bug: {bug}"
        )

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data. O(1)."""
        report = self.report
        return {
            "model": self.model.name,
            "path": None if self.path is None else str(self.path),
            "violated": None if self.case is None else self.case.violated,
            "steps": None if self.case is None else len(self.case.steps),
            "planted": None if self.case is None else self.case.planted,
            "departure_step": None if report is None else report.departure,
            "real_code_ok": None if report is None else report.ok,
            "tlc_seconds": round(self.tlc.seconds, 2),
            "error": self.error,
        }


def reproduce(
    model: Model,
    tla_dir: Path,
    directory: Path,
    *,
    java: Path,
    jar: Path,
    workers: int = 1,
    on_line: LineSink | None = None,
) -> ReproResult:
    """Check ``model`` with TLC and write its counterexample's test into ``directory``;
    the test is also replayed on the real code, for the report. O(TLC + trace size)."""
    result = run_model(model, tla_dir, java, jar, workers, on_line)
    try:
        case = build_case(model, result, tla_dir)
    except ReproError as exc:
        return ReproResult(model, result, error=str(exc))
    properties = read_config(tla_dir / model.config).properties
    explanation = explain_failure(result.raw_output, [tla_dir], properties) or ""
    directory.mkdir(parents=True, exist_ok=True)
    path = repro_path(directory, model.name)
    path.write_text(render_test(case, model, explanation), encoding="utf-8")
    return ReproResult(model, result, path, case, replay(case, bug=""))
