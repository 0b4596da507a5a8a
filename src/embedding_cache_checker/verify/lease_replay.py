"""Replay every edge of a lease model's state graph on the code (conformance link 1, leases).

The inputs are the MCReplayLease<Policy> models (tla/leases/models/, over
``EmbeddingCacheLeaseReplay``): the lease spec's steps, each labelled by the
history variable ``step`` with the call it is (``[op, key, n, lease]``). As
``replay.replay_graph`` does for the core, each state is reached on the code
along the path TLC took, and every step TLC explored from there is applied to
a copy through the real transitions (``transitions`` and ``lease_transitions``)
with the clock reading ``now`` of the TLA+ state; the result and the state
after it must match the spec's, and the invariant sweep must hold.

What a step is on the code:

* a call (``Alloc`` ... ``Unpin``, ``Query``, ``Lease``, ``Renew``,
  ``LeaseRelease``): first the lazy expiry every public call runs,
  ``expire_leases(s, now)``, which must release nothing (the spec's calls are
  enabled only when no lease is due), then the call (``Query``: nothing more);
* ``Expire(l)``: the cache's expiry of one due lease. The code releases every
  due lease in one ``expire_leases`` call, the spec one lease per step (in any
  order): the step that leaves no lease due is that call; a step that leaves
  another one due is a point inside it, replayed with its per-lease step
  (``end_lease``) on the lease ``expire_leases`` must find due. From every
  state with two or more leases due, the whole call is replayed too and must
  reach the state where the spec has expired them all (the spec's Expire
  steps commute, so that state is one);
* ``Tick``: the clock moves one on. The spec's clock stops at ``MaxTime`` and
  shifts the deadlines instead (``EmbeddingCacheLeases``, Time), so the code's
  clock is the spec's ``now`` plus the shifts so far, kept with each code state.

The states are compared on ``abstraction.abstract_state`` (pins, sizes, the
policy's variables, free blocks) and on the leases: each live lease object of
the spec is a live lease of the code (the replay maps the spec's lease objects
to the code's leases it granted) on the same key with the same time left
(``deadline - now``; any time left below 0 counts as -1, as the spec's Tick
keeps it), no other lease is live on the code, each key's plain pins are the
spec's ``plain``, and the spec's ``settled`` implies the code's last expiry ran at
the current time (the code's expiry also records it; the spec's Expire step leaves
``settled`` to the call it is part of). The core calls the spec does not allow from a state
where no lease is due must be refused (a typed error, nothing changed), as in
``replay.replay_graph``: plain ``unpin`` of an entry whose pins are all leases
among them.
"""

from __future__ import annotations

import inspect
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from embedding_cache.policies import make_policy
from embedding_cache.verification import (
    LEASE_OPERATIONS,
    CacheState,
    Lease,
    end_lease,
    invariants,
    lease_id,
    set_lease_held,
)

from ..abstraction import AbstractState, abstract_state, raw_view
from .alloc_rule import SEED_RULE, AllocRule
from .model_code import PolicyFactory, policy_variables
from .replay import (
    REAL_OPERATIONS,
    GraphReplayReport,
    MismatchLog,
    Operations,
    _check_refused,
    _disabled_steps,
    call_text,
    expected_result,
    replay_graph,
    result_kind,
)
from .spec_read import spec_abstract
from .state_graph import StateGraph
from .tla_values import TlaFunction, TlaValue

#: The spec's core calls (the ``op`` of ``step``) and the code's operation of each.
CORE_CALLS = {
    "Alloc": "alloc",
    "AllocFail": "alloc",
    "MarkReady": "mark_ready",
    "Pin": "pin",
    "PinIfReady": "pin_if_ready",
    "Unpin": "unpin",
    "Discard": "discard",
}

#: The real lease transitions, bare (a planted bug's table replaces one).
REAL_LEASE_OPERATIONS: Operations = {
    name: inspect.unwrap(func) for name, func in LEASE_OPERATIONS.items()
}

#: A lease's time left, as compared: below 0 is -1 (the spec's Tick keeps it there).
HeldLease = tuple[str, int]


def is_lease_graph(graph: StateGraph) -> bool:
    """True when ``graph`` is a lease replay input (its states have ``step``). O(1)."""
    first = next(iter(graph.states.values()), None)
    return first is not None and "step" in first and "lease" in first


@dataclass
class CodeState:
    """The code's state at one spec state: the cache state, the clock's shift (code
    clock = the spec's now + shift) and the code lease id of each live spec lease."""

    s: CacheState
    shift: int = 0
    ids: dict[str, int] = field(default_factory=dict)
    #: Spec lease object -> (code lease id, key) of the lease it held and that ended.
    ended: dict[str, tuple[int, str]] = field(default_factory=dict)

    def copy(self) -> CodeState:
        """An independent copy. O(the state's copy)."""
        return CodeState(self.s.copy(), self.shift, dict(self.ids), dict(self.ended))

    def end(self, slot: str, key: str) -> None:
        """Spec lease object ``slot`` (on ``key``) ended: released or expired. O(1)."""
        self.ended[slot] = (self.ids.pop(slot), key)

    def stale_handles(self) -> list[Lease]:
        """A handle of each ended lease, as its reader still holds it (bound to this
        state's book: the copies the replay makes give the live leases new handles,
        not the ended ones). O(ended leases)."""
        handles = []
        for number, key in self.ended.values():
            entry = self.s.entries.get(key)
            blocks = entry.block_ids if entry is not None else ()
            handle = Lease(None, self.s.leases, number, key, blocks, 0.0)
            set_lease_held(handle, False)  # it ended: what release() and expiry leave in a handle
            handles.append(handle)
        return handles


@dataclass(frozen=True)
class SpecLeases:
    """The lease part of a spec state."""

    now: int
    held: dict[str, HeldLease]  # live lease object -> (key, time left)
    due: frozenset[str]  # the live ones past their deadline
    plain: dict[str, int]
    settled: bool


def _field(record: TlaValue, name: str) -> TlaValue:
    assert isinstance(record, TlaFunction), record
    return record[name]


def spec_leases(state: Mapping[str, TlaValue]) -> SpecLeases:
    """The lease variables of a spec state. O(lease objects + keys)."""
    now = state["now"]
    assert isinstance(now, int)
    leases = state["lease"]
    assert isinstance(leases, TlaFunction)
    held: dict[str, HeldLease] = {}
    due = set()
    for slot, record in leases.items():
        if _field(record, "state") != "held":
            continue
        deadline = _field(record, "deadline")
        assert isinstance(deadline, int)
        held[str(slot)] = (str(_field(record, "key")), max(deadline - now, -1))
        if now > deadline:
            due.add(str(slot))
    plain = state["plain"]
    assert isinstance(plain, TlaFunction)
    counts = {str(k): v for k, v in plain.items() if isinstance(v, int)}
    return SpecLeases(now, held, frozenset(due), counts, state["settled"] is True)


def spec_step(state: Mapping[str, TlaValue]) -> tuple[str, str, int, str]:
    """(op, key, n, lease object) of the call a spec state's ``step`` records. O(1)."""
    op, key, n, slot = (_field(state["step"], f) for f in ("op", "key", "n", "lease"))
    assert isinstance(op, str) and isinstance(n, int)
    return op, str(key), n, str(slot)


def lease_action_text(op: str, key: str, n: int, slot: str) -> str:
    """The step as the code's call, e.g. ``lease('k1', 1) as l2``. O(1)."""
    if op in CORE_CALLS:
        return call_text(CORE_CALLS[op], key, n)
    if op == "Lease":
        return f"lease({key!r}, {n}) as {slot}"
    if op == "Renew":
        return f"renew_lease({slot}, {n})"
    if op == "LeaseRelease":
        return f"release_lease({slot})"
    if op == "Expire":
        return f"expire_leases() of {slot}"
    if op == "Query":
        return "a query (its expiry; release, renew of ended leases)"
    return "tick" if op == "Tick" else op


def code_leases(c: CodeState, now: int) -> Counter[HeldLease]:
    """The code's live leases as (key, time left) shapes, time left below 0 as -1."""
    return Counter(
        (lease.key, max(int((lease.deadline or 0) - now), -1)) for lease in c.s.leases.live.values()
    )


def state_difference(c: CodeState, want: AbstractState, spec: SpecLeases) -> str | None:
    """What differs between the code's state and the spec's; None when nothing does."""
    got = abstract_state(c.s)
    if got != want:
        return f"state {got} but spec reaches {want}"
    now = spec.now + c.shift
    book = c.s.leases
    for slot, shape in spec.held.items():
        lease = book.live.get(c.ids.get(slot, -1))
        if lease is None:
            return f"spec lease {slot} {shape} is live, the code's is not"
        mine = (lease.key, max(int((lease.deadline or 0) - now), -1))
        if mine != shape:
            return f"spec lease {slot} is {shape} (key, time left), the code's {mine}"
    if len(book.live) != len(spec.held):
        return f"the code has leases {code_leases(c, now)}, the spec {sorted(spec.held.values())}"
    for key, count in spec.plain.items():
        entry = c.s.entries.get(key)
        plain = 0 if entry is None else max(entry.pin_count, 0) - book.per_key.get(key, 0)
        if plain != count:
            return f"{key!r} has {plain} plain pins, the spec {count}"
    if (spec.settled and book.now != now) or book.now > now:
        return f"settled is {spec.settled} in the spec; the code's last expiry ran at {book.now}"
    broken = invariants.violations(c.s)
    if broken:
        return "; ".join(f"{name}: {detail}" for name, detail in broken)
    return None


def _expiry(ops: Operations, c: CodeState, now: int, want: list[str]) -> str | None:
    """The code's ``expire_leases(s, now)``, which must release the keys ``want``."""
    got = ops["expire_leases"](c.s, now)
    if sorted(got) != sorted(want):
        return f"expire_leases released {sorted(got)}, the spec {sorted(want)}"
    return None


def _expire_step(
    ops: Operations, c: CodeState, slot: str, source: SpecLeases, target: SpecLeases
) -> str | None:
    """The spec's Expire of ``slot``: the code's expiry call, or a step inside it."""
    now = source.now + c.shift
    lease = c.s.leases.live.get(c.ids.get(slot, -1))
    if lease is None or lease.deadline is None or not lease.deadline < now:
        return f"lease {slot} is due in the spec, not on the code ({lease!r}, now {now})"
    if target.due:  # another lease is still due: a point inside the code's one call
        end_lease(c.s, lease)
    else:
        problem = _expiry(ops, c, now, [source.held[s][0] for s in source.due])
        if problem:
            return problem
    c.end(slot, lease.key)
    return None


def _query_step(ops: Operations, c: CodeState, now: int) -> str | None:
    """The rest of a Query: a release or renewal of an ended lease returns False."""
    for handle in c.stale_handles():
        done = ops["release_lease"](c.s, handle), ops["renew_lease"](c.s, handle, 0, now)
        if done != (False, False):
            return f"release, renew of ended lease {handle!r} returned {done}, spec False"
    return None


def _lease_step(
    ops: Operations, c: CodeState, key: str, n: int, slot: str, now: int, before: AbstractState
) -> str | None:
    """``lease(key, n)``, whose held lease becomes the spec's ``slot``."""
    granted = ops["lease"](c.s, key, n, now)
    entry = before.entry(key)
    want = "none" if entry is None else ("not-ready" if entry.pins < 0 else "held")
    held = isinstance(granted, Lease) and granted.held
    got = "none" if granted is None else ("held" if held else "not-ready")
    if got != want:
        return f"returned a {got} lease, spec says {want}"
    if held:
        c.ids[slot] = lease_id(granted)
        c.ended.pop(slot, None)
    return None


def _held_step(ops: Operations, c: CodeState, op: str, n: int, slot: str, now: int) -> str | None:
    """``renew_lease`` or ``release_lease`` of the spec's held lease ``slot``."""
    lease = c.s.leases.live.get(c.ids.get(slot, -1))
    if lease is None:
        return f"lease {slot} is held in the spec, not on the code"
    if op == "Renew":
        done = ops["renew_lease"](c.s, lease, n, now)
    elif op == "LeaseRelease":
        done = ops["release_lease"](c.s, lease)
        c.end(slot, lease.key)
    else:
        return f"unknown step {op!r}"
    return None if done is True else f"returned {done!r}, spec says True"


def apply_step(
    ops: Operations,
    c: CodeState,
    step: tuple[str, str, int, str],
    source: SpecLeases,
    target: SpecLeases,
    before: AbstractState,
) -> str | None:
    """Apply one labelled spec step to ``c`` (in place); what went wrong, or None.
    O(the call, plus the state's leases for a Query)."""
    op, key, n, slot = step
    now = source.now + c.shift
    if op == "Tick":
        if target.now == source.now:  # at MaxTime: the spec shifts its deadlines instead
            c.shift += 1
        return None
    if op == "Expire":
        return _expire_step(ops, c, slot, source, target)
    problem = _expiry(ops, c, now, [])  # the lazy expiry of every call: nothing is due
    if problem:
        return problem
    if op == "Query":  # also a release or renewal that returns False: of an ended lease
        return _query_step(ops, c, now)
    if op in CORE_CALLS:
        name = CORE_CALLS[op]
        value = ops[name](c.s, key, n) if name == "alloc" else ops[name](c.s, key)
        got, want = result_kind(value, op), expected_result(op, before, key)
        return None if got == want else f"returned {got}, spec says {want}"
    if op == "Lease":
        return _lease_step(ops, c, key, n, slot, now, before)
    return _held_step(ops, c, op, n, slot, now)


class _LeaseReplay:
    """One replay of a lease graph: the spec's states read once, the code's state per node,
    the mismatches noted (``replay_any_graph``)."""

    def __init__(
        self, graph: StateGraph, table: Operations, policy_vars: tuple[str, ...], limit: int
    ) -> None:
        self.graph, self.table, self.policy_vars = graph, table, policy_vars
        self.report = GraphReplayReport(states=len(graph.states), edges_total=len(graph.edges))
        self.spec: dict[str, tuple[AbstractState, SpecLeases]] = {}
        self.outgoing: dict[str, list[str]] = {}
        for origin, target, _label in graph.edges:
            self.outgoing.setdefault(origin, []).append(target)
        self.code: dict[str, CodeState] = {}
        self.todo: deque[str] = deque()
        self.log = MismatchLog(self.report, limit)

    def spec_at(self, node: str) -> tuple[AbstractState, SpecLeases]:
        """The spec's state at ``node``, read once. O(the state)."""
        found = self.spec.get(node)
        if found is None:
            state = self.graph.states[node]
            found = self.spec[node] = (spec_abstract(state, self.policy_vars), spec_leases(state))
        return found

    def edges(self, node: str, stop_at_first: bool) -> set[tuple[str, str, int]]:
        """Replay every step out of ``node``; the core calls among them (the enabled ones)."""
        here = self.code[node]
        before, source = self.spec_at(node)
        enabled: set[tuple[str, str, int]] = set()
        for target in self.outgoing.get(node, []):
            step = spec_step(self.graph.states[target])
            if step[0] in CORE_CALLS:
                enabled.add((step[0], step[1], step[2]))
            want, target_leases = self.spec_at(target)
            c = here.copy()
            try:
                problem = apply_step(self.table, c, step, source, target_leases, before)
            except Exception as exc:  # any raise is a divergence: the spec allows this step
                problem = f"raised {type(exc).__name__}: {exc}"
            problem = problem or state_difference(c, want, target_leases)
            self.report.edges_replayed += 1
            if problem is not None:
                self.log.note(node, lease_action_text(*step), problem)
                if stop_at_first:
                    break
            elif target not in self.code:
                self.code[target] = c
                self.todo.append(target)
        return enabled

    def all_expired(self, node: str) -> str | None:
        """The state the spec reaches from ``node`` once every due lease expired (None: cut
        by the depth bound). O(leases due)."""
        here = node
        while self.spec_at(here)[1].due:
            nxt = [
                t
                for t in self.outgoing.get(here, [])
                if spec_step(self.graph.states[t])[0] == "Expire"
            ]
            if not nxt:
                return None
            here = nxt[0]
        return here

    def batch(self, node: str) -> None:
        """From a state with several leases due: the code's one expiry call releases them
        all and reaches the state where the spec has expired each."""
        source = self.spec_at(node)[1]
        end = self.all_expired(node)
        if end is None:
            return
        c = self.code[node].copy()
        now = source.now + c.shift
        problem = _expiry(self.table, c, now, [source.held[s][0] for s in source.due])
        for slot in source.due:
            c.end(slot, source.held[slot][0])
        problem = problem or state_difference(c, *self.spec_at(end))
        self.report.batch_expiries += 1
        if problem is not None:
            self.log.note(node, "expire_leases() of every due lease", problem)

    def refusals(
        self, node: str, enabled: set[tuple[str, str, int]], keys: list[str], n: int, pins: int
    ) -> None:
        """The core calls the spec does not allow at ``node`` must be refused."""
        here = self.code[node].s
        scratch = here.copy()  # a refused call changes nothing, so one copy serves all
        before = abstract_state(here)  # read once: every refusal starts from it
        raw = raw_view(here)
        for op, key, blocks in _disabled_steps(enabled, self.spec_at(node)[0], keys, n, pins):
            problem = _check_refused(self.table, scratch, op, key, blocks, before, raw=raw)
            self.report.disabled_checked += 1
            if problem is not None:
                self.log.note(node, call_text(op, key, blocks), problem)
                scratch = here.copy()


def replay_any_graph(
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
    """Replay every edge of ``graph`` on the code (BFS from the initial states): a lease
    replay input (``is_lease_graph``) here, any other by ``replay.replay_graph``. What the
    conformance and planted steps call. ``ops`` are the core's operations by name, with any
    lease transition it names replacing the real one (a planted bug's table); the code's
    cache runs the model's alloc ``rule`` (``alloc_rule.AllocRule``). O(edges * state size)."""
    if not is_lease_graph(graph):
        return replay_graph(
            graph, keys, num_blocks, max_pins, ops, max_mismatches, stop_at_first, policy, rule
        )
    table: dict[str, Callable[..., Any]] = {**REAL_LEASE_OPERATIONS, **ops}
    run = _LeaseReplay(graph, table, policy_variables(policy, num_blocks), max_mismatches)
    run.report.policy = make_policy(policy, num_blocks).name
    for node in graph.initial:
        run.code[node] = CodeState(rule.state(num_blocks, policy))
        run.todo.append(node)
    while run.todo and not (stop_at_first and run.log.count):
        node = run.todo.popleft()
        enabled = run.edges(node, stop_at_first)
        if stop_at_first and run.log.count:
            break
        due = run.spec_at(node)[1].due
        if len(due) > 1:
            run.batch(node)
        if enabled and not due:  # else a call here first expires, or a frontier state
            run.refusals(node, enabled, keys, num_blocks, max_pins)
    return run.log.close()
