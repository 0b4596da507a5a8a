"""Replay every edge of a TLC state graph on the code and compare (conformance link 1).

For each state of the model, the code is driven into a matching state (by
replaying the path TLC took to reach it), and every step TLC explored from
there is applied to a copy: the operation's result and the abstract state
after it (``abstraction.abstract_state``) must match the spec's. Then, for
every operation the spec does *not* allow in that state, the code must raise a
typed error and change nothing (MisuseUnchangedProp). Block identities are
not compared (the spec leaves the allocator's choice open); instead the full
invariant sweep runs on the code's state after every step.

The replay is parametrised by the eviction policy: the code's ``CacheState``
gets the model's policy (a name from ``EVICTION_POLICIES`` with parameters,
or any factory taking ``num_blocks``, e.g. a planted broken policy), and the
spec's state is read with that policy's variables (the names its
``abstract()`` returns, as its TLA+ module names them: fields of the record
variable ``policy``). Other TLA+ variables -- ``evictable``, ``lastOp``, and
the ghosts of the ``*Check`` modules (fifo's ``joinStamp``/``joinClock``,
s3fifo's ``reused``) -- are not compared.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from embedding_cache import invariants, transitions
from embedding_cache.entry import CacheEntry
from embedding_cache.errors import CacheError
from embedding_cache.policies import EVICTION_POLICIES, EvictionPolicy, make_policy
from embedding_cache.state import CacheState

from ..abstraction import AbstractEntry, AbstractState, abstract_state, policy_view
from .state_graph import StateGraph
from .tla_values import ModelValue, TlaFunction, TlaValue

#: The code's operation for each TLA+ action name (spec/NAMES.md).
ACTION_TO_OPERATION = {
    "Alloc": "alloc",
    "AllocFail": "alloc",
    "MarkReady": "mark_ready",
    "Pin": "pin",
    "PinIfReady": "pin_if_ready",
    "Unpin": "unpin",
    "Discard": "discard",
}

Operations = Mapping[str, Callable[..., Any]]

#: The real transitions; planted-bug checks swap in broken ones.
REAL_OPERATIONS: Operations = transitions.OPERATIONS

#: What builds the code's policy: a name in ``EVICTION_POLICIES`` or a factory of ``num_blocks``.
PolicyFactory = str | Callable[[int], EvictionPolicy]


#: A TLA+ constant's word boundaries (MaxFreq: Max|Freq).
_WORD = re.compile(r"(?<!^)(?=[A-Z])")


def code_name(constant: str) -> str:
    """The code policy's attribute (and constructor parameter, if it is one) of the same
    meaning as the TLA+ constant ``constant``: its name in snake_case (``Scale`` ->
    ``scale``, ``SmallTarget`` -> ``small_target``); a snake_case name is its own. One rule
    for every policy (tla/README.md), so no policy is listed here. O(len(constant))."""
    return _WORD.sub("_", constant).lower()


def policy_factory(name: str, params: Mapping[str, int] | None = None) -> PolicyFactory:
    """The factory of policy ``name`` with constructor parameters ``params`` (e.g. gdsf's
    ``scale``), or with the TLA+ constants a model sets (``policy_params`` in
    tla/models.json, e.g. ``Scale``): those that are constructor parameters are passed,
    the derived ones (s3fifo's ``SmallTarget``) must agree with the code's
    (``check_constants``).

    Raises:
        ValueError: ``name`` is not a policy of ``EVICTION_POLICIES``.
    """
    kwargs = code_params(name, params or {})
    return functools.partial(EVICTION_POLICIES[name], **kwargs) if kwargs else name


def code_params(name: str, params: Mapping[str, int]) -> dict[str, int]:
    """The constructor parameters of policy ``name`` among ``params`` (given by the code's
    names, or by the TLA+ constants' names, ``code_name``); the others are dropped.
    O(len(params)).

    Raises:
        ValueError: ``name`` is not a policy of ``EVICTION_POLICIES``.
    """
    cls = EVICTION_POLICIES.get(name)
    if cls is None:
        raise ValueError(f"unknown eviction policy {name!r}; known: {sorted(EVICTION_POLICIES)}")
    accepted = inspect.signature(cls).parameters
    kwargs = {code_name(k): v for k, v in params.items()}
    return {k: v for k, v in kwargs.items() if k in accepted}


def _constant_value(policy: EvictionPolicy, constant: str) -> int | None:
    """The code policy's value of TLA+ constant ``constant`` (None: it has no such integer
    attribute, so the constant is not one of its module's). O(1)."""
    value = getattr(policy, code_name(constant), None)
    return value if type(value) is int else None


def policy_constants(policy: EvictionPolicy, names: Iterable[str]) -> dict[str, int]:
    """The TLA+ constants ``names`` of ``policy``'s module (its plan's ``tla_constants``,
    from the manifest), valued as the code's policy has them. O(len(names)).

    Raises:
        ValueError: the code's policy has no integer attribute for one of them.
    """
    values = {name: _constant_value(policy, name) for name in names}
    missing = [name for name, value in values.items() if value is None]
    if missing:
        attrs = [code_name(name) for name in missing]
        raise ValueError(f"the code's {policy.name} has no integer attribute {attrs} for {missing}")
    return {name: value for name, value in values.items() if value is not None}


def check_constants(policy: EvictionPolicy, constants: Mapping[str, object]) -> str | None:
    """None when every constant of ``constants`` (a model's config or ``policy_params``)
    that is one of ``policy``'s (an integer attribute by its ``code_name``) has the code
    policy's value; else what differs. O(len(constants))."""
    for name, given in constants.items():
        value = _constant_value(policy, name)
        if value is not None and str(given).strip() != str(value):
            return f"{name} is {given} in the model but {value} in the code's {policy.name}"
    return None


def derived_constants(
    name: str, constants: Mapping[str, object], num_blocks: int
) -> dict[str, int]:
    """The derived TLA+ constants among ``constants`` (a model's config, e.g. s3fifo's
    ``SmallTarget``), valued as the code's policy ``name`` has them for a pool of
    ``num_blocks`` blocks: the constants that are integer attributes of that policy
    (``code_name``) but not constructor parameters, the policy built with the
    constructor parameters the config sets (gdsf's ``Scale``, kept as given). What a
    config scaled to another pool size rewrites (``tlc.shapes.scale_config``); one rule
    for every policy, so none is listed. O(len(constants)).

    Raises:
        ValueError: ``name`` is not a policy of ``EVICTION_POLICIES``.
    """
    given = {k: int(str(v)) for k, v in constants.items() if re.fullmatch(r"-?\d+", str(v))}
    params = code_params(name, given)
    policy = make_policy(policy_factory(name, params), num_blocks)
    values = {c: _constant_value(policy, c) for c in constants if code_name(c) not in params}
    return {c: value for c, value in values.items() if value is not None}


def policy_variables(policy: PolicyFactory, num_blocks: int) -> tuple[str, ...]:
    """The variables the code's policy is compared on: the names its ``abstract()`` gives.
    O(1) (an empty policy)."""
    return tuple(sorted(make_policy(policy, num_blocks).checks().abstract()))


@dataclass
class Mismatch:
    """One step on which the code and the spec disagree."""

    source: str  # node id of the state the step starts from
    step: str  # e.g. "alloc('k1', 2)"
    detail: str


@dataclass
class ReplayReport:
    """What the replay covered and where code and spec disagreed."""

    policy: str = ""  # the eviction policy replayed
    states: int = 0
    edges_total: int = 0
    edges_replayed: int = 0
    disabled_checked: int = 0
    #: Lease graphs: states with several leases due, whose one expiry call was replayed.
    batch_expiries: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every edge was replayed and nothing disagreed."""
        return not self.mismatches and self.edges_replayed == self.edges_total


class MismatchLog:
    """The mismatches of one replay: each one counted, the first ``limit`` kept in
    ``report`` (the core's replay and the lease replay share it)."""

    def __init__(self, report: ReplayReport, limit: int) -> None:
        self.report, self.limit, self.count = report, limit, 0

    def note(self, source: str, step: str, detail: str) -> None:
        """Count a mismatch; keep its details up to the limit. O(1)."""
        self.count += 1
        if len(self.report.mismatches) < self.limit:
            self.report.mismatches.append(Mismatch(source, step, detail))

    def close(self) -> ReplayReport:
        """The report, with a last line counting the mismatches not kept. O(1)."""
        kept = len(self.report.mismatches)
        if self.count > kept:
            self.report.mismatches.append(Mismatch("", "", f"... and {self.count - kept} more"))
        return self.report


def clone(s: CacheState) -> CacheState:
    """A deep copy of ``s`` (``CacheState.copy``: entries, free list and policy,
    a planted policy keeping its class). O(N + entries + the policy's clone)."""
    return s.copy()


def spec_value(value: TlaValue) -> Any:
    """A TLA+ value as the code's ``PolicyChecks.abstract()`` writes it (before ``policy_view``).

    Functions and records become dicts, sequences tuples, model values str;
    the empty function ``<<>>`` stays an empty tuple, which ``policy_view``
    makes equal to an empty dict. O(size of the value).
    """
    if isinstance(value, TlaFunction):
        return {spec_value(k): spec_value(v) for k, v in value.items()}  # type: ignore[arg-type]
    if isinstance(value, tuple):
        return tuple(spec_value(v) for v in value)
    if isinstance(value, frozenset):
        return frozenset(spec_value(v) for v in value)
    if isinstance(value, ModelValue):
        return str(value)
    return value


def _free_count(free: TlaValue) -> int:
    """The number of free blocks: a set of ids (block level) or a number (counts level)."""
    if isinstance(free, frozenset):
        return len(free)
    assert isinstance(free, int), free
    return free


def spec_abstract(
    state: Mapping[str, TlaValue], policy_vars: tuple[str, ...] = ("queue",)
) -> AbstractState:
    """The spec's state read the same way as ``abstraction.abstract_state`` reads the code's.

    ``policy_vars`` are the policy variables compared (``policy_variables``),
    read as fields of the record variable ``policy`` or as variables of their
    own, each as ``spec_value`` reads it: a policy's ``abstract()`` writes its
    variables in the shapes its TLA+ module gives them (tla/README.md), so no
    policy needs a reader of its own. O(size of the state).

    Raises:
        KeyError: the spec's state lacks one of ``policy_vars``.
    """
    entries = state["entries"]
    live = entries if isinstance(entries, TlaFunction) else {}
    pairs = []
    for key, record in live.items():
        assert isinstance(record, TlaFunction)
        pins = record["pins"]
        blocks = record["blocks"] if "blocks" in record else record["size"]
        assert isinstance(pins, int) and isinstance(blocks, (frozenset, int))
        size = len(blocks) if isinstance(blocks, frozenset) else blocks
        pairs.append((str(key), AbstractEntry(pins, size)))
    # The policy's variables: fields of the record variable ``policy``, or variables of
    # their own (the TLA+ modules have used both shapes).
    whole = state.get("policy")
    fields: Mapping[object, TlaValue] = whole if isinstance(whole, TlaFunction) else {}
    variables = {}
    for name in policy_vars:
        if name in state:
            raw = state[name]
        elif name in fields:
            raw = fields[name]
        else:
            raise KeyError(f"the spec's state has no policy variable {name!r}: {sorted(state)}")
        variables[name] = spec_value(raw)
    return AbstractState(
        entries=tuple(sorted(pairs)),
        policy=policy_view(variables),
        free=_free_count(state["free"]),
        # The spec's meaning of has_held_entries(), not the code's shortcut.
        held=any(e.pins != 0 for _, e in pairs),
    )


def last_op(state: Mapping[str, TlaValue]) -> tuple[str, str, int]:
    """(action, key, n) of the operation a spec state records (the history variable
    ``lastOp``), e.g. ``("Alloc", "k1", 2)``. O(1)."""
    last = state["lastOp"]
    assert isinstance(last, TlaFunction)
    op, key, n = last["op"], last["key"], last["n"]
    assert isinstance(op, str) and isinstance(n, int)
    return op, str(key), n


def _call(ops: Operations, action: str, s: CacheState, key: str, n: int) -> Any:
    name = ACTION_TO_OPERATION[action]
    if name == "alloc":
        return ops[name](s, key, n)
    return ops[name](s, key)


def expected_result(action: str, before: AbstractState, key: str) -> str:
    """What the code's call must return for a spec step of ``action`` on ``key`` from
    ``before`` (a ``result_kind``). O(entries)."""
    if action == "Alloc":
        return "not-ready-entry"  # a new entry starts not-ready
    if action == "AllocFail":
        return "none"
    if action == "PinIfReady":
        entry = before.entry(key)
        if entry is None:
            return "none"
        return "not-ready-entry" if entry.pins < 0 else "entry"
    return "ok"


def result_kind(value: object, action: str = "") -> str:
    """What a call of the operation of ``action`` returned, as ``expected_result`` names
    it: "ok", "none", "entry" (ready) or "not-ready-entry". O(1)."""
    if value is None:
        # mark_ready/pin/unpin/discard return None on success.
        return "ok" if action in ("MarkReady", "Pin", "Unpin", "Discard") else "none"
    if isinstance(value, CacheEntry):
        return "entry" if value.ready else "not-ready-entry"
    return f"unexpected {value!r}"


def call_text(op: str, key: str, n: int) -> str:
    """The code's call ``op`` as written, e.g. ``alloc('k1', 2)`` or ``pin('k1')``. O(1)."""
    return f"{op}({key!r}, {n})" if op == "alloc" else f"{op}({key!r})"


def step_text(action: str, key: str, n: int) -> str:
    """The code's call of a spec step, e.g. ``alloc('k1', 2)``. O(1)."""
    return call_text(ACTION_TO_OPERATION[action], key, n)


def _check_step(
    ops: Operations,
    s: CacheState,
    action: str,
    key: str,
    n: int,
    want: AbstractState,
    before: AbstractState | None = None,
) -> str | None:
    """Apply one spec step to ``s``; return what disagreed, or None. ``before`` is
    ``abstract_state(s)`` when the caller has it (every edge out of a node shares it)."""
    if before is None:
        before = abstract_state(s)
    try:
        value = _call(ops, action, s, key, n)
    except Exception as exc:  # any raise is a divergence: the spec allows this step
        return f"raised {type(exc).__name__}: {exc}"
    got_result = result_kind(value, action)
    want_result = expected_result(action, before, key)
    if got_result != want_result:
        return f"returned {got_result}, spec says {want_result}"
    got = abstract_state(s)
    if got != want:
        return f"state {got} but spec reaches {want}"
    broken = invariants.violations(s)
    if broken:
        return "; ".join(f"{name}: {detail}" for name, detail in broken)
    return None


def _disabled_steps(
    enabled: set[tuple[str, str, int]],
    spec_state: AbstractState,
    keys: list[str],
    num_blocks: int,
    max_pins: int,
) -> list[tuple[str, str, int]]:
    """(operation, key, n) calls the spec does not allow here, and the code must refuse."""
    enabled_ops = {(ACTION_TO_OPERATION[a], k, n) for a, k, n in enabled}
    out = []
    for key in keys:
        entry = spec_state.entry(key)
        for op in ("mark_ready", "pin", "unpin", "discard"):
            # Pins at the model's bound are disabled only by the model, not by the code.
            if op == "pin" and entry is not None and entry.pins >= max_pins:
                continue
            if not any(o == op and k == key for o, k, _ in enabled_ops):
                out.append((op, key, 0))
        for n in range(num_blocks + 2):  # n == N + 1 exceeds the pool: CapacityError
            if ("alloc", key, n) not in enabled_ops:
                out.append(("alloc", key, n))
    return out


def _check_refused(
    ops: Operations, s: CacheState, op: str, key: str, n: int, before: AbstractState | None = None
) -> str | None:
    """The code must raise a typed error for a call the spec disallows, changing nothing.
    ``before`` is ``abstract_state(s)`` when the caller has it (refusals share one copy)."""
    if before is None:
        before = abstract_state(s)
    try:
        value = ops[op](s, key, n) if op == "alloc" else ops[op](s, key)
    except CacheError:
        after = abstract_state(s)
        return None if after == before else f"raised but changed {before} -> {after}"
    except Exception as exc:
        return f"raised {type(exc).__name__}, not a typed CacheError: {exc}"
    return f"accepted (returned {result_kind(value)}) though the spec has no such step"


def replay_graph(
    graph: StateGraph,
    keys: list[str],
    num_blocks: int,
    max_pins: int,
    ops: Operations = REAL_OPERATIONS,
    max_mismatches: int = 20,
    stop_at_first: bool = False,
    policy: PolicyFactory = "fifo",
) -> ReplayReport:
    """Replay every edge of ``graph`` on the code (BFS from the initial states).

    The code runs ``ops`` on states built with ``policy`` (a name or a
    factory, e.g. of a planted broken policy, which keeps the real one's
    name). O(edges * state size). Stops collecting
    details after ``max_mismatches`` but keeps counting, unless
    ``stop_at_first`` (enough to show a planted bug is caught). A lease model's graph
    is replayed by ``lease_replay.replay_any_graph``, which calls this for the others.
    """
    report = ReplayReport(states=len(graph.states), edges_total=len(graph.edges))
    policy_vars = policy_variables(policy, num_blocks)
    report.policy = make_policy(policy, num_blocks).name
    spec_states: dict[str, AbstractState] = {}

    def spec_at(node: str) -> AbstractState:
        """The spec's abstract state at ``node`` (read once per node)."""
        found = spec_states.get(node)
        if found is None:
            found = spec_states[node] = spec_abstract(graph.states[node], policy_vars)
        return found

    outgoing: dict[str, list[tuple[str, str]]] = {}
    for source, target, _label in graph.edges:
        outgoing.setdefault(source, []).append((target, _label))
    code_state: dict[str, CacheState] = {}
    todo: deque[str] = deque()
    for node in graph.initial:
        code_state[node] = CacheState(num_blocks, make_policy(policy, num_blocks))
        todo.append(node)
    log = MismatchLog(report, max_mismatches)

    while todo:
        node = todo.popleft()
        here = code_state[node]
        enabled: set[tuple[str, str, int]] = set()
        # Read once per node: every edge's step and every refusal starts from it
        # (the replay's main cost is reading states: about half of it was this).
        here_abstract = abstract_state(here)
        for target, _label in outgoing.get(node, []):
            target_state = graph.states[target]
            action, key, n = last_op(target_state)
            enabled.add((action, key, n))
            s = clone(here)
            problem = _check_step(ops, s, action, key, n, spec_at(target), here_abstract)
            report.edges_replayed += 1
            if problem is not None:
                log.note(node, step_text(action, key, n), problem)
                if stop_at_first:
                    break
                continue
            if target not in code_state:
                code_state[target] = s
                todo.append(target)
        if stop_at_first and log.count:  # enabled is partial: refusal checks would lie
            break
        if not enabled:
            # A state with no step was not expanded (a depth-bounded model's
            # frontier): every expanded state has one, since PinIfReady of an
            # absent key or Unpin of a pinned one is always possible.
            continue
        spec_here = spec_at(node)
        scratch = clone(here)  # a refused call changes nothing, so one copy serves all
        for op, key, n in _disabled_steps(enabled, spec_here, keys, num_blocks, max_pins):
            problem = _check_refused(ops, scratch, op, key, n, here_abstract)
            report.disabled_checked += 1
            if problem is not None:
                log.note(node, call_text(op, key, n), problem)
                scratch = clone(here)
        if stop_at_first and log.count:
            break
    # Edges out of states the code never reached (after a mismatch) were not replayed.
    return log.close()
