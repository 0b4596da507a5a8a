"""The linearizability checker: Wing & Gong's search with Lowe's memoisation (WGL).

A history is linearizable when its calls can be put in one order that (a)
keeps every call that returned before another was invoked ahead of it (real
time) and (b) gives every call the outcome the sequential specification
gives it in that order. The search (Wing & Gong 1993, with the cache of
visited configurations of Lowe, "Testing for linearizability", 2017: the
algorithm of the Porcupine and Knossos checkers) is depth-first: from the
calls not yet placed it tries each *minimal* one (invoked before the
earliest response among them), earliest response first -- the order a lock
would have imposed, so a correct history is usually placed without
backtracking; a call whose observed outcome is not the specification's in
the current state prunes that branch. A configuration is visited once: the
calls of one thread are sequential, so "which calls are placed" is each
thread's count of placed calls; with it go the specification's state (its
fingerprint, ``spec.fingerprint``) and the late-ready reads still waiting
for their ``mark_ready`` (``_settle``).

Cost: at most (number of distinct configurations) steps of the
specification, each O(N + entries); the number is bounded by
prod(calls per thread + 1) * states * pending reads, and far smaller in
practice: about one configuration per call for the real cache.
``max_configurations`` bounds it: past it the verdict is undecided, never a
guess.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass

from embedding_cache.policies import PolicySpec
from embedding_cache.verification import NOT_READY

from .history import Call, CallOutcome
from .spec import Node, SequentialSpec, agrees, late_ready

#: Default bound on configurations explored per history.
MAX_CONFIGURATIONS = 200_000


@dataclass(frozen=True)
class LinResult:
    """The checker's answer for one history."""

    #: True: linearizable; False: not; None: undecided (``max_configurations`` reached).
    linearizable: bool | None
    calls: int
    #: Configurations the search visited.
    configurations: int
    #: A linearization if one was found, else the longest prefix of one the search reached.
    order: tuple[Call, ...]
    #: When not linearizable: the calls that could come next after ``order``,
    #: each with the outcome the specification gives it there.
    stuck: tuple[tuple[Call, CallOutcome], ...] = ()

    def explain(self) -> str:
        """A readable account of the verdict (the witness, when there is one)."""
        if self.linearizable:
            return f"linearizable ({self.calls} calls, {self.configurations} configurations)"
        if self.linearizable is None:
            return f"undecided after {self.configurations} configurations"
        origin = min((c.invoked for c in (*self.order, *(c for c, _ in self.stuck))), default=0)
        lines = [f"NOT linearizable: longest linearizable prefix ({len(self.order)} calls):"]
        lines += [f"  {call.describe(origin)}" for call in self.order]
        lines.append("then no call that may come next agrees with the specification:")
        lines += [f"  {call.describe(origin)}   spec: {spec!r}" for call, spec in self.stuck]
        return "\n".join(lines)


#: A pending "late ready" read: (key, time by which the caller had read the
#: entry ready). The entry's ``mark_ready`` must be placed later and have been
#: invoked by then; until it is, the entry must stay live.
Pending = tuple[tuple[str, int], ...]


def _settle(call: Call, spec: CallOutcome, after: Node, pending: Pending) -> Pending | None:
    """The pending late-ready reads once ``call`` is placed, or None if one is broken. O(P)."""
    if late_ready(call.outcome, spec):
        pending = (*pending, (str(call.args[0]), call.read_by))
    if not pending:
        return pending
    kept = []
    for key, deadline in pending:
        entry = after.state.entries.get(key)
        if entry is not None and entry.pin_count == NOT_READY:
            kept.append((key, deadline))  # still waiting for its mark_ready
        elif not (call.op == "mark_ready" and call.args[0] == key and call.invoked <= deadline):
            return None  # made ready too late to have been seen, or discarded
    return tuple(sorted(kept))


def check_calls(
    calls: Sequence[Call],
    num_blocks: int,
    policy: PolicySpec = "fifo",
    *,
    max_configurations: int = MAX_CONFIGURATIONS,
) -> LinResult:
    """Decide whether ``calls`` is linearizable against the cache's sequential specification.

    ``calls`` may be in any order; each thread's calls must not overlap one
    another. Complexity: see the module docstring.

    Raises:
        ValueError: two calls of one thread overlap, or a call returns before it is invoked.
    """
    threads = _by_thread(calls)
    spec = SequentialSpec(num_blocks, policy)
    ends = tuple(len(t) for t in threads)
    start = tuple(0 for _ in threads)
    none: Pending = ()

    def minimal(pos: tuple[int, ...]) -> list[tuple[int, Call]]:
        """The calls that may come next at ``pos``, earliest response first. O(T log T).

        A thread's next call is minimal unless some unplaced call returned
        before it was invoked (that one must come first).
        """
        nexts = [(t, threads[t][i]) for t, i in enumerate(pos) if i < ends[t]]
        if not nexts:
            return []
        bound = min(call.returned for _, call in nexts)
        nexts.sort(key=lambda tc: tc[1].returned)
        return [(t, call) for t, call in nexts if call.invoked <= bound]

    def candidates(
        pos: tuple[int, ...], node: Node, pending: Pending
    ) -> Iterator[tuple[int, Call, Node, Pending]]:
        """The minimal calls at ``pos`` whose outcome agrees with the spec's in ``node``."""
        for t, call in minimal(pos):
            outcome, after = spec.step(node, call)
            if agrees(call.outcome, outcome):
                settled = _settle(call, outcome, after, pending)
                if settled is not None:
                    yield t, call, after, settled

    if start == ends:
        return LinResult(True, 0, 1, ())
    seen: set[tuple[tuple[int, ...], Hashable, Pending]] = {(start, spec.initial.fingerprint, none)}
    stack = [(start, candidates(start, spec.initial, none))]
    path: list[Call] = []
    best: tuple[list[Call], tuple[int, ...], Node] = ([], start, spec.initial)
    while stack:
        pos, options = stack[-1]
        for t, call, after, pending in options:
            nxt = (*pos[:t], pos[t] + 1, *pos[t + 1 :])
            config = (nxt, after.fingerprint, pending)
            if config in seen:
                continue
            seen.add(config)
            path.append(call)
            if nxt == ends and not pending:
                return LinResult(True, len(calls), len(seen), tuple(path))
            if len(path) > len(best[0]):
                best = (list(path), nxt, after)
            if len(seen) >= max_configurations:
                return LinResult(None, len(calls), len(seen), tuple(best[0]))
            stack.append((nxt, candidates(nxt, after, pending)))
            break
        else:
            stack.pop()
            if path:
                path.pop()
    prefix, pos, node = best
    stuck = tuple((call, spec.step(node, call)[0]) for _, call in minimal(pos))
    return LinResult(False, len(calls), len(seen), tuple(prefix), stuck)


def _by_thread(calls: Sequence[Call]) -> list[list[Call]]:
    """Each thread's calls in program order (threads renumbered 0..T-1). O(C log C)."""
    groups: dict[int, list[Call]] = {}
    for call in calls:
        if call.returned < call.invoked:
            raise ValueError(f"call returns before it is invoked: {call}")
        groups.setdefault(call.thread, []).append(call)
    threads = []
    for t in sorted(groups):
        own = sorted(groups[t], key=lambda c: c.invoked)
        for a, b in itertools.pairwise(own):
            if b.invoked < a.returned:
                raise ValueError(f"calls of one thread overlap: {a} and {b}")
        threads.append(own)
    return threads
