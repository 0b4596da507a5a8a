"""Replay every edge of a TLC state graph on the code and compare (conformance link 1).

For each state of the model, the code is driven into a matching state (by
replaying the path TLC took to reach it), and every step TLC explored from
there is applied to a copy: the operation's result and the abstract state
after it (``abstraction.abstract_state``) must match the spec's. Then, for
every operation the spec does *not* allow in that state, the code must raise a
typed error and change nothing (MisuseUnchangedProp). Block identities are
not compared (the spec leaves the allocator's choice open) but in the
block-exact mode below; instead the full invariant sweep runs on the code's
state after every step. The spec's states are read by ``spec_read``, the
code's cache is built by ``model_code`` and ``alloc_rule``.

The replay is parametrised by the eviction policy: the code's ``CacheState``
gets the model's policy (a name from ``EVICTION_POLICIES`` with parameters,
or any factory taking ``num_blocks``, e.g. a planted broken policy), and the
spec's state is read with that policy's variables (the names its
``abstract()`` returns, as its TLA+ module names them: fields of the record
variable ``policy``). Other TLA+ variables -- ``evictable``, ``lastOp``, and
the ghosts of the ``*Check`` modules (fifo's ``joinStamp``/``joinClock``,
s3fifo's ``reused``) -- are not compared.

The replay is also parametrised by the model's alloc rule (``alloc_rule.AllocRule``,
from its manifest entry): the code's state gets the same admission filter (the
doorkeeper with the model's ``DoorCapacity``: its door is compared, as the
TLA+ variable ``door``, and an ``AllocDecline`` edge is an alloc that returns
None) or the same contiguity bound (``Contiguity`` on the extents allocator).
Under contiguity which entries an alloc evicts depends on where the free blocks
lie, so such a model is replayed *block-exact*: its graph keeps every choice of
ids an alloc may take (no ``CanonicalAlloc``), the call is applied once on the
code, and the replay follows the one edge whose target holds exactly the code's
blocks, free ids and victims (``abstraction.block_state``); no such edge is a
mismatch. States the code's allocator never reaches are not visited (their
edges, and the edges of choices the code did not make, are counted apart:
``GraphReplayReport.edges_other_choice`` and ``edges_unreached``); every state it
reaches, every step from it and every refused call there is checked as above.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from embedding_cache import CacheEntry, CacheError
from embedding_cache.policies import make_policy
from embedding_cache.verification import CacheState, invariants, transitions

from ..abstraction import (
    AbstractState,
    BlockState,
    RawView,
    abstract_state,
    block_state,
    raw_view,
)
from .alloc_rule import SEED_RULE, AllocRule
from .model_code import PolicyFactory, policy_variables
from .spec_read import last_op, spec_abstract, spec_blocks
from .state_graph import StateGraph

#: The code's operation for each TLA+ action name (spec/NAMES.md).
ACTION_TO_OPERATION = {
    "Alloc": "alloc",
    "AllocFail": "alloc",
    "AllocDecline": "alloc",
    "MarkReady": "mark_ready",
    "Pin": "pin",
    "PinIfReady": "pin_if_ready",
    "Unpin": "unpin",
    "Discard": "discard",
}

#: Operations by name, as ``transitions.OPERATIONS`` (a planted bug's swaps some).
Operations = Mapping[str, Callable[..., Any]]

#: The real transitions; planted-bug checks swap in broken ones.
REAL_OPERATIONS: Operations = transitions.OPERATIONS


@dataclass
class Mismatch:
    """One step on which the code and the spec disagree."""

    source: str  # node id of the state the step starts from
    step: str  # e.g. "alloc('k1', 2)"
    detail: str


@dataclass
class GraphReplayReport:
    """What a state-graph replay covered and where code and spec disagreed."""

    policy: str = ""  # the eviction policy replayed
    states: int = 0
    edges_total: int = 0
    edges_replayed: int = 0
    disabled_checked: int = 0
    #: Lease graphs: states with several leases due, whose one expiry call was replayed.
    batch_expiries: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)
    #: Replayed block-exact (``AllocRule.block_exact``): the code's choice of ids followed.
    block_exact: bool = False
    #: The states the code was driven into (and every step from them replayed).
    states_reached: int = 0
    #: Block-exact: edges of a call the code made, to a choice of ids it did not make.
    edges_other_choice: int = 0
    #: Block-exact: edges out of states the code's choices of ids never reach.
    edges_unreached: int = 0

    @property
    def complete(self) -> bool:
        """True when every edge was replayed, or (block-exact only) is a choice of ids the
        code did not make or leaves a state it never reaches. O(1)."""
        skipped = self.edges_other_choice + self.edges_unreached
        if skipped and not self.block_exact:
            return False
        return self.edges_replayed + skipped == self.edges_total

    @property
    def ok(self) -> bool:
        """True when the replay is ``complete`` and nothing disagreed."""
        return not self.mismatches and self.complete


class MismatchLog:
    """The mismatches of one replay: each one counted, the first ``limit`` kept in
    ``report`` (the core's replay and the lease replay share it)."""

    def __init__(self, report: GraphReplayReport, limit: int) -> None:
        self.report, self.limit, self.count = report, limit, 0

    def note(self, source: str, step: str, detail: str) -> None:
        """Count a mismatch; keep its details up to the limit. O(1)."""
        self.count += 1
        if len(self.report.mismatches) < self.limit:
            self.report.mismatches.append(Mismatch(source, step, detail))

    def close(self) -> GraphReplayReport:
        """The report, with a last line counting the mismatches not kept. O(1)."""
        kept = len(self.report.mismatches)
        if self.count > kept:
            self.report.mismatches.append(Mismatch("", "", f"... and {self.count - kept} more"))
        return self.report


def clone(s: CacheState) -> CacheState:
    """A deep copy of ``s`` (``CacheState.copy``: entries, free list and policy,
    a planted policy keeping its class). O(N + entries + the policy's clone)."""
    return s.copy()


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
    if action in ("AllocFail", "AllocDecline"):
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


def action_text(action: str, key: str, n: int) -> str:
    """The code's call of a spec step, e.g. ``alloc('k1', 2)``. O(1)."""
    return call_text(ACTION_TO_OPERATION[action], key, n)


def _apply_step(
    ops: Operations, s: CacheState, action: str, key: str, n: int, before: AbstractState
) -> str | None:
    """Apply one spec step's call to ``s`` (in place); what disagreed with the spec's
    result, or None. ``before`` is ``abstract_state(s)`` (every edge out of a node
    shares it)."""
    try:
        value = _call(ops, action, s, key, n)
    except Exception as exc:  # any raise is a divergence: the spec allows this step
        return f"raised {type(exc).__name__}: {exc}"
    got_result = result_kind(value, action)
    want_result = expected_result(action, before, key)
    if got_result != want_result:
        return f"returned {got_result}, spec says {want_result}"
    return None


def _check_state(s: CacheState, got: AbstractState, want: AbstractState) -> str | None:
    """The code's state after a step (``got``: its abstract state) against the spec's
    (``want``), then the invariant sweep; what disagreed, or None."""
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
    ops: Operations,
    s: CacheState,
    op: str,
    key: str,
    n: int,
    before: AbstractState | None = None,
    ids: BlockState | None = None,
    raw: RawView | None = None,
) -> str | None:
    """The code must raise a typed error for a call the spec disallows, changing nothing.
    ``before`` is ``abstract_state(s)`` when the caller has it (refusals share one copy);
    ``ids``, ``block_state(s)`` in a block-exact replay: the ids must not move either;
    ``raw``, ``raw_view(s)``: when the view after the call equals it, so does the
    abstract state, which is then not read again."""
    if before is None:
        before = abstract_state(s)
    try:
        value = ops[op](s, key, n) if op == "alloc" else ops[op](s, key)
    except CacheError:
        after = before if raw is not None and raw_view(s) == raw else abstract_state(s)
        if after != before:
            return f"raised but changed {before} -> {after}"
        moved = ids is not None and block_state(s) != ids
        return f"raised but moved block ids {ids} -> {block_state(s)}" if moved else None
    except Exception as exc:
        return f"raised {type(exc).__name__}, not a typed CacheError: {exc}"
    return f"accepted (returned {result_kind(value)}) though the spec has no such step"


#: A spec step's call: (action, key, n), as ``last_op`` reads it.
SpecCall = tuple[str, str, int]


def _ids_text(blocks: BlockState) -> str:
    """Block ids as a mismatch names them: each entry's, then the free ones. O(N)."""
    held = ", ".join(f"{k}: {sorted(ids)}" for k, ids in blocks.entries)
    return f"{{{held}}} free {sorted(blocks.free)}"


class _Replay:
    """One replay of a core graph (``replay_graph``): the spec's states read once, the
    code's state per node reached, the mismatches noted."""

    def __init__(
        self,
        graph: StateGraph,
        ops: Operations,
        policy: PolicyFactory,
        num_blocks: int,
        rule: AllocRule,
        limit: int,
    ) -> None:
        self.graph, self.ops, self.rule = graph, ops, rule
        self.report = GraphReplayReport(
            states=len(graph.states), edges_total=len(graph.edges), block_exact=rule.block_exact
        )
        self.policy_vars = policy_variables(policy, num_blocks)
        self.report.policy = make_policy(policy, num_blocks).name
        self.spec_states: dict[str, AbstractState] = {}
        self.spec_ids: dict[str, BlockState] = {}
        self.outgoing: dict[str, list[str]] = {}
        for source, target, _label in graph.edges:
            self.outgoing.setdefault(source, []).append(target)
        self.code: dict[str, CacheState] = {}
        self.todo: deque[str] = deque()
        for node in graph.initial:
            self.code[node] = rule.state(num_blocks, policy)
            self.todo.append(node)
        self.log = MismatchLog(self.report, limit)

    def spec_at(self, node: str) -> AbstractState:
        """The spec's abstract state at ``node`` (read once per node)."""
        found = self.spec_states.get(node)
        if found is None:
            found = self.spec_states[node] = spec_abstract(
                self.graph.states[node], self.policy_vars
            )
        return found

    def ids_at(self, node: str) -> BlockState:
        """The spec's block ids at ``node`` (read once per node; block-exact only)."""
        found = self.spec_ids.get(node)
        if found is None:
            found = self.spec_ids[node] = spec_blocks(self.graph.states[node])
        return found

    def calls(self, node: str) -> dict[SpecCall, list[str]]:
        """The targets of ``node``'s edges by the call each step is: one per call, but
        several for an alloc whose choice of ids the graph keeps open. O(its edges)."""
        out: dict[SpecCall, list[str]] = {}
        for target in self.outgoing.get(node, []):
            out.setdefault(last_op(self.graph.states[target]), []).append(target)
        return out

    def reach(self, target: str, s: CacheState) -> None:
        """The code's state ``s`` matched ``target``: drive from it, if not yet reached."""
        if target not in self.code:
            self.code[target] = s
            self.todo.append(target)

    def step(self, node: str, call: SpecCall, targets: list[str], before: AbstractState) -> bool:
        """Apply ``call`` to a copy of the code's state at ``node`` and match the outcome
        with the edges to ``targets``: each of them (by the abstract state), or, block-exact,
        the one holding exactly the code's ids. False on a mismatch. O(the call + the
        state's read)."""
        action, key, n = call
        s = clone(self.code[node])
        problem = _apply_step(self.ops, s, action, key, n, before)
        self.report.edges_replayed += len(targets)  # each compared with the code's outcome
        if self.rule.block_exact and problem is None:
            ids = block_state(s)
            chosen = [t for t in targets if self.ids_at(t) == ids]
            if chosen:
                self.report.edges_replayed -= len(targets) - len(chosen)
                self.report.edges_other_choice += len(targets) - len(chosen)
                targets = chosen
            else:
                victims = block_state(self.code[node]).victims(ids)
                choices = "; ".join(_ids_text(self.ids_at(t)) for t in targets[:4])
                problem = (
                    f"took ids {_ids_text(ids)}, evicting {list(victims)}: no edge of the "
                    f"spec holds them (its {len(targets)} choices: {choices})"
                )
        if problem is not None:
            self.log.note(node, action_text(action, key, n), problem)
            return False
        got = abstract_state(s)
        ok = True
        for target in targets:
            mine = s if target == targets[0] else clone(s)
            problem = _check_state(mine, got, self.spec_at(target))
            if problem is not None:
                self.log.note(node, action_text(action, key, n), problem)
                ok = False
            else:
                self.reach(target, mine)
        return ok

    def refusals(
        self, node: str, enabled: set[SpecCall], keys: list[str], num_blocks: int, max_pins: int
    ) -> None:
        """Every call the spec does not allow at ``node`` must be refused, changing nothing."""
        here = self.code[node]
        before = abstract_state(here)
        ids = block_state(here) if self.rule.block_exact else None
        raw = raw_view(here)
        scratch = clone(here)  # a refused call changes nothing, so one copy serves all
        for op, key, n in _disabled_steps(enabled, self.spec_at(node), keys, num_blocks, max_pins):
            problem = _check_refused(self.ops, scratch, op, key, n, before, ids, raw)
            self.report.disabled_checked += 1
            if problem is not None:
                self.log.note(node, call_text(op, key, n), problem)
                scratch = clone(here)

    def close(self) -> GraphReplayReport:
        """The report, with the block-exact replay's edges out of states never reached."""
        if self.rule.block_exact:
            self.report.edges_unreached = sum(
                len(targets) for node, targets in self.outgoing.items() if node not in self.code
            )
        return self.log.close()


def replay_graph(
    graph: StateGraph,
    keys: list[str],
    num_blocks: int,
    max_pins: int,
    ops: Operations = REAL_OPERATIONS,
    max_mismatches: int = 20,
    stop_at_first: bool = False,
    policy: PolicyFactory = "fifo",
    rule: AllocRule = SEED_RULE,
) -> GraphReplayReport:
    """Replay every edge of ``graph`` on the code (BFS from the initial states).

    The code runs ``ops`` on states built with ``policy`` (a name or a
    factory, e.g. of a planted broken policy, which keeps the real one's
    name) under the model's alloc ``rule`` (block-exact when it has
    contiguity: the module docstring). O(edges * state size). Stops collecting
    details after ``max_mismatches`` but keeps counting, unless
    ``stop_at_first`` (enough to show a planted bug is caught). A lease model's graph
    is replayed by ``lease_replay.replay_any_graph``, which calls this for the others.
    """
    run = _Replay(graph, ops, policy, num_blocks, rule, max_mismatches)
    while run.todo:
        node = run.todo.popleft()
        run.report.states_reached += 1
        # Read once per node: every edge's step and every refusal starts from it
        # (the replay's main cost is reading states: about half of it was this).
        before = abstract_state(run.code[node])
        calls = run.calls(node)
        for call, targets in calls.items():
            if not run.step(node, call, targets, before) and stop_at_first:
                break
        if stop_at_first and run.log.count:  # the calls are partial: refusal checks would lie
            break
        if not calls:
            # A state with no step was not expanded (a depth-bounded model's
            # frontier): every expanded state has one, since PinIfReady of an
            # absent key or Unpin of a pinned one is always possible.
            continue
        run.refusals(node, set(calls), keys, num_blocks, max_pins)
        if stop_at_first and run.log.count:
            break
    # Edges out of states the code never reached (after a mismatch) were not replayed.
    return run.close()
