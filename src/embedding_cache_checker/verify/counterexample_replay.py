"""Replay a TLC counterexample on the code: what the tests written by
``embedding-cache tlc --repro`` run.

A ``Counterexample`` holds a failing model's behaviour as literals: each step's
operation (the spec's history variable ``lastOp``), what the call must return,
and the spec's state after it, read the way the code's state is read
(``abstraction``: entries with pins and block counts, the free count, held,
the policy's variables; plus the evictable-block counter, a variable of
both). ``replay`` makes the same calls on a cache -- the real code with the
model's policy, or a planted bug of the catalogue (``REPRO_BUG_ENV``) -- and
after every step checks every state invariant (``invariants``; HeldEntriesInv
also on the cache's own ``has_held_entries()``) and every action property
(``transition_properties``), and compares the code's state with the spec's.

The real code keeps the invariant the buggy model breaks, so it usually departs
from the counterexample: the report names the first step where the code's
result or abstract state differs from the spec's (none when the model's mistake
is in a query and every state is one the code reaches too). The replay then goes
on with the same calls (the code refuses those its state does not allow, with
a typed error that must change nothing) and keeps checking. A planted bug
that makes the model's mistake breaks a check. Block identities are not
compared: the spec leaves the allocator's choice open.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from embedding_cache import EmbeddingCache
from embedding_cache.policies import EVICTION_POLICIES
from embedding_cache.verification import invariants, state_of

from ..abstraction import AbstractState, abstract_state
from ..text_table import render_table as table
from .model_code import code_params, policy_factory
from .planted import by_name
from .policy_transition_properties import properties_for, transition_violations
from .replay import ACTION_TO_OPERATION, action_text, result_kind
from .transition_properties import CodeTransition

#: Run a generated test on a planted bug of the catalogue instead of the real code: the
#: bug's name (``planted.by_name``), or ``LINKED``: the bug planting the model's mistake.
REPRO_BUG_ENV = "EMBEDDING_CACHE_REPRO_BUG"
LINKED = "linked"


class SpecState(NamedTuple):
    """A state of the counterexample, as the code's state is compared with it."""

    abstract: AbstractState
    evictable: int  # the evictable-block counter (TLA+: evictable)


class ReproStep(NamedTuple):
    """One step of the counterexample: the spec's operation and the state after it."""

    action: str  # the TLA+ action recorded in lastOp: Alloc, AllocFail, MarkReady, ...
    key: str
    n: int  # alloc's block count (0 for the others)
    result: str  # what the code's call must return (``replay.result_kind``'s names)
    state: SpecState

    @property
    def call(self) -> str:
        """The code's call, e.g. ``alloc('k1', 2)``. O(1)."""
        return action_text(self.action, self.key, self.n)


@dataclass(frozen=True)
class Counterexample:
    """A failing model's counterexample, with what the code needs to replay it."""

    model: str
    violated: str  # what TLC reported violated
    checks: tuple[str, ...]  # the invariants and properties the model checks
    policy: str  # the model's policy (EVICTION_POLICIES)
    policy_params: Mapping[str, int]  # its TLA+ constants, as in tla/models.json
    num_blocks: int  # N
    initial: SpecState
    steps: tuple[ReproStep, ...]
    planted: str | None = None  # the catalogue's bug planting the model's mistake
    # A model of the cache's callers (tag protocol): its finding is in their order of
    # calls, so the real cache must follow the counterexample to its end.
    callers: bool = False


@dataclass
class StepReport:
    """What one step did on the code."""

    number: int  # 1 for the first operation (TLC's state 2)
    call: str
    want: str  # what the spec's step returns
    got: str  # what the code returned, or "raised <error>"
    difference: str  # how the code's result or state differs from the spec's ("" if not)
    violations: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class CounterexampleReport:
    """The replay of a counterexample on one version of the code."""

    case: Counterexample
    code: str  # "the real code" or "planted bug <name>"
    initial_difference: str
    steps: list[StepReport]
    unchecked: tuple[str, ...]  # the model's checks the code has no statement of

    @property
    def departure(self) -> int | None:
        """The first step whose result or state differs from the spec's (0: the initial
        state), or None when the code follows the counterexample to its end. O(steps)."""
        if self.initial_difference:
            return 0
        return next((r.number for r in self.steps if r.difference), None)

    @property
    def violations(self) -> list[tuple[int, str, str]]:
        """(step, name, detail) of every check the code broke. O(steps)."""
        return [(r.number, name, detail) for r in self.steps for name, detail in r.violations]

    @property
    def ok(self) -> bool:
        """True when every invariant and property held at every step and, for a model of
        the callers (``Counterexample.callers``), the code followed the counterexample to
        its end: the calls in the callers' order do on the code what the finding says.
        O(steps)."""
        return not self.violations and not (self.case.callers and self.departure is not None)

    def summary(self) -> str:
        """Two lines: where the code departs, and whether every check held. O(steps)."""
        case, at = self.case, self.departure
        head = f"{case.model} ({case.policy}, {case.num_blocks} blocks) on {self.code}:"
        if at is None:
            last = len(case.steps)
            where = (
                f"follows the counterexample to its end (step {last}), where the model "
                f"violates {case.violated}"
            )
        elif at == 0:
            where = f"departs from the counterexample initially: {self.initial_difference}"
        else:
            step = self.steps[at - 1]
            where = (
                f"departs from the counterexample at step {at} (TLC state {at + 1}), "
                f"{step.call}: {step.difference}"
            )
        broken = self.violations
        if broken:
            number, name, detail = broken[0]
            verdict = f"breaks {name} at step {number}: {detail}"
        elif case.callers and at is not None:
            verdict = (
                "does not reproduce the callers' finding: the code must follow the "
                "counterexample to its end"
            )
        else:
            verdict = "keeps every invariant and property at every step"
            if case.violated in stated_on_code(case.policy):
                verdict += f" ({case.violated} too)"
        return f"{head} {where}\n{head} {verdict}"

    def text(self) -> str:
        """The summary, a table of the steps and every violation. O(steps)."""
        rows = []
        for r in self.steps:
            names = ", ".join(sorted({name for name, _ in r.violations})) or "-"
            rows.append(
                [str(r.number), r.call, r.want, r.got, "departs" if r.difference else "-", names]
            )
        lines = [
            self.summary(),
            table(["step", "call", "spec", "code", "state", "broken"], rows, right={0}),
        ]
        lines += [f"step {n}: {name}: {detail}" for n, name, detail in self.violations]
        if self.unchecked:
            lines.append(f"not stated on the code (not checked): {', '.join(self.unchecked)}")
        return "\n".join(lines)


def code_under_test(case: Counterexample, bug: str | None = None) -> tuple[EmbeddingCache, str]:
    """An empty cache to replay ``case`` on, and what it is: the real code with the model's
    policy, or the planted bug ``bug`` (by name, or ``LINKED``; None: ``$REPRO_BUG_ENV``,
    unset or empty for the real code). O(num_blocks).

    Raises:
        ValueError: no such planted bug, no linked one, or it is no bug under the policy.
    """
    name = os.environ.get(REPRO_BUG_ENV, "") if bug is None else bug
    if not name:
        eviction = policy_factory(case.policy, case.policy_params)
        return EmbeddingCache(case.num_blocks, eviction), "the real code"
    if name == LINKED:
        if case.planted is None:
            raise ValueError(f"{case.model} has no linked planted bug ({REPRO_BUG_ENV}={LINKED})")
        name = case.planted
    try:
        planted = by_name(name)
    except KeyError:
        raise ValueError(f"{REPRO_BUG_ENV}={name}: no planted bug of that name") from None
    params = code_params(case.policy, case.policy_params)
    eviction = planted.eviction(case.policy, **params)
    return planted.cache_class(case.policy)(case.num_blocks, eviction), f"planted bug {name}"


def code_state(cache: EmbeddingCache) -> SpecState:
    """The cache's state as the counterexample's are written: the abstract state, with
    held as the cache's own ``has_held_entries()`` answers, and the evictable counter.
    O(entries + the policy's abstract)."""
    s = state_of(cache)
    return SpecState(abstract_state(s)._replace(held=cache.has_held_entries()), s.evictable_blocks)


def difference(code: SpecState, spec: SpecState) -> str:
    """How the code's state differs from the spec's, field by field ("" if it does not)."""
    parts = [
        f"{name} {mine!r} (spec: {theirs!r})"
        for name, mine, theirs in (
            *zip(AbstractState._fields, code.abstract, spec.abstract, strict=True),
            ("evictable", code.evictable, spec.evictable),
        )
        if mine != theirs
    ]
    return "; ".join(parts)


def checks_after(cache: EmbeddingCache, step: CodeTransition) -> list[tuple[str, str]]:
    """(name, detail) of every invariant and step property broken after ``step``, the first
    detail per name. O(N + entries + the policy's abstract)."""
    s = state_of(cache)
    found = dict(invariants.violations(s))
    held = any(e.pin_count != 0 for e in s.entries.values())
    answer = cache.has_held_entries()
    if answer != held:
        found.setdefault("HeldEntriesInv", f"has_held_entries() is {answer}, some-held is {held}")
    for name, detail in transition_violations(step):
        found.setdefault(name, detail)
    return list(found.items())


def stated_on_code(policy: str) -> frozenset[str]:
    """The names the replay checks on a cache with ``policy``. O(1)."""
    order = EVICTION_POLICIES[policy].order_property
    return frozenset(invariants.INVARIANTS) | frozenset(properties_for(policy, order))


def replay(case: Counterexample, bug: str | None = None) -> CounterexampleReport:
    """Make the counterexample's calls on the code under test (``code_under_test``),
    checking everything after each step and comparing with the spec's states.
    O(steps * (N + entries + the policy's abstract))."""
    cache, code = code_under_test(case, bug)
    s = state_of(cache)
    start = difference(code_state(cache), case.initial)
    reports = []
    for number, step in enumerate(case.steps, start=1):
        op = ACTION_TO_OPERATION[step.action]
        before = s.copy()
        result: object = None
        error: BaseException | None = None
        try:
            method = getattr(cache, op)
            result = method(step.key, step.n) if op == "alloc" else method(step.key)
        except Exception as exc:  # a refusal is expected once the code has departed
            error = exc
        got = f"raised {type(error).__name__}" if error else result_kind(result, step.action)
        if got != step.result:
            departs = f"returned {got}, the spec {step.result}"
        else:
            departs = difference(code_state(cache), step.state)
        done = CodeTransition(op, step.key, step.n, before, s, result, error)
        reports.append(
            StepReport(number, step.call, step.result, got, departs, checks_after(cache, done))
        )
    unchecked = tuple(c for c in case.checks if c not in stated_on_code(case.policy))
    return CounterexampleReport(case, code, start, reports, unchecked)
