"""CrossHair inside the worker: how to build a state, which raises are fine, how a job runs.

Loaded only inside the CrossHair worker (``crosshair_check``); never by the cache.
Everything that talks to CrossHair's own API is here; ``crosshair_check`` sizes
the jobs, runs the workers and merges their reports.

**States.** Left alone, CrossHair builds a ``CacheState`` argument by calling
``CacheState(num_blocks)``, so it only ever sees empty caches. ``install``
registers a factory instead: ``build_state`` maps a handful of small
(symbolic) ints onto a well-formed state -- each block free or owned by one
entry, each entry's pin count in [-1, MAX_PIN], the evictable count the
ready+unpinned entries' blocks -- and a policy (``configure`` picks which)
holding exactly the ready+unpinned entries, in a state of its own that
further choices describe. How those choices lay onto the policy is the
policy's own business: its checker-side adapter
(``embedding_cache_checker.policies.<name>``, found from ``EVICTION_POLICIES``)
gives the builder, each choice's bounds and any order between choices, and
the inverse the tests use. Adding a policy adds an adapter and edits nothing here.

Every well-formed state with at most ``MAX_BLOCKS`` blocks, ``MAX_ENTRIES``
entries and pins up to ``MAX_PIN`` is reachable this way up to renaming keys
and up to the order of the free stack (ascending or descending; the
contracts compute the blocks an alloc should take from the same stack, so
the order changes which blocks move, not whether a contract holds); the
tests check it against random walks of the real transitions. The
transitions' own preconditions (the full sweep) then confirm each built
state is well-formed, so CrossHair checks the inductive step. With a policy
bug configured, the state is built by the real policy and then re-typed
(``PlantedBug.plant``): one broken step from a good state.

**Raises.** CrossHair accepts an exception only when the docstring lists it
in Sphinx form (``:raises X:``); the transitions document theirs in a
Google-style ``Raises:`` section, which it ignores, so every misuse call
(``mark_ready`` of an absent key, ...) would be reported. ``install`` makes
it read that section too, except ``TypeError``: its documented triggers (a key
that is not a str, an ``n_blocks`` that is not an int) cannot occur when
CrossHair builds arguments from the annotations, so a ``TypeError`` can only
be a bug and stays reported. Accepted raises are not checked further: icontract
runs no postcondition when the call raises, so ``MisuseUnchangedProp`` is
left to the tests.

**Time-outs.** The budgets are counted in paths (``crosshair_check``), so a run
repeats exactly, except where a time limit cuts a path short: a path's CPU
deadline, or Z3's wall-clock timeout on one query (both far above what these
paths need). ``install`` counts those (``time_outs``), so a report can say
whether its outcomes depended on the machine's load.

**Analysis.** ``check_job`` analyses one job's conditions one at a time, as
``crosshair check --analysis_kind=icontract`` would, with ``max_iterations``
as the budget and the CPU cap as ``per_condition_timeout``, and keeps what the
report needs (outcome, paths confirmed and started, CPU seconds, time-outs).
"""

from __future__ import annotations

import builtins
import copy
import inspect
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from embedding_cache import CacheEntry
from embedding_cache.policies import EVICTION_POLICIES
from embedding_cache.verification import CacheState, FreeStack, errors, set_pin_count

from ..policies import adapter
from ..policies.base import KEYS, MAX_BLOCKS, MAX_ENTRIES, MAX_PIN
from .crosshair_budget import TRANSITIONS, ConditionOutcome, ConditionResult, cap_seconds
from .planted import PlantedBug

__all__ = [
    "KEYS",
    "MAX_BLOCKS",
    "MAX_ENTRIES",
    "MAX_PIN",
    "BuiltState",
    "build_state",
    "check_job",
    "configure",
    "documented_raises",
    "install",
    "time_outs",
]


# The states built here keep their free ids in the cache's own ``FreeStack``
# (a ``list`` subclass), which also works around a CrossHair modelling bug
# (0.0.113): slicing an exact ``list`` with a symbolic bound (``free[-n:]``
# in ``take``) yields a lazy view, and the ``del free[-n:]`` that follows
# corrupts it, so ``sort()`` raised IndexError on a correct alloc. CrossHair
# only intercepts exact ``list``s, so a subclass is sliced concretely (the
# bound is realized, one value per path). The solver handles this list far
# better than the extents allocator's dictionaries, so CrossHair checks the
# stack; the extents allocator is checked by the contracts, the stateful
# tests and its own unit tests.


class BuiltState(CacheState):
    """The CacheState ``build_state`` makes: one that copies with its hooks rebound.

    A state's hooks are methods bound to its policy's structures (fifo's are the
    OrderedDict's own, one inside a ``functools.partial``), and ``copy.deepcopy``
    keeps a builtin method bound to the original: a deep copy of a fifo state
    evicts from the original's queue. CrossHair deep-copies arguments (to
    report them, and, realizing symbolic values, to print a counterexample),
    which then met states whose queue and hooks disagreed (a spurious KeyError
    from ``popitem``), or symbolic values it could not print (0.0.113). Both
    copies here copy the fields and bind the hooks afresh.
    """

    __slots__ = ()

    def __deepcopy__(self, memo: dict[int, Any]) -> BuiltState:
        return self._twin(lambda value: copy.deepcopy(value, memo))

    def __ch_deep_realize__(self, memo: dict[int, Any]) -> BuiltState:
        from crosshair.copyext import CopyMode, deepcopyext

        return self._twin(lambda value: deepcopyext(value, CopyMode.REALIZE, memo))

    def _twin(self, copy_of: Callable[[Any], Any]) -> BuiltState:
        twin = BuiltState(0, copy_of(self.policy))  # binds the hooks to the copied policy
        twin.num_blocks = copy_of(self.num_blocks)
        twin.free = copy_of(self.free)
        twin.entries = copy_of(self.entries)
        twin.evictable_blocks = copy_of(self.evictable_blocks)
        return twin


def build_state(
    num_blocks: int,
    num_entries: int,
    owners: Sequence[int],
    pins: Sequence[int],
    free_descending: bool = False,
    policy: str = "fifo",
    choices: Sequence[int] = (),
) -> CacheState:
    """The well-formed state these choices describe. O(num_blocks * num_entries).

    ``owners[b]`` is the index of the entry owning block ``b``, or -1 when
    it is free; ``pins[i]`` is entry ``i``'s pin count; ``policy`` names the
    policy and ``choices`` its state, as its adapter lays them out
    (``adapter(policy).choice_bounds``). Arguments must be in range
    (``num_blocks <= MAX_BLOCKS``, ``num_entries <= MAX_ENTRIES``, ``-1 <= pins[i]
    <= MAX_PIN``, ``-1 <= owners[b] < num_entries``, each choice within its bounds
    and its adapter's ``at_most``); the factory gives the solver exactly these
    bounds. Called with plain ints (as the tests do) it builds one concrete state.
    """
    side = adapter(policy)
    s = BuiltState(num_blocks, side.factory(num_blocks))
    ids = range(num_blocks - 1, -1, -1) if free_descending else range(num_blocks)
    s.free = FreeStack(b for b in ids if owners[b] < 0)
    s.entries = {}
    s.evictable_blocks = 0
    entries = []
    for i in range(num_entries):
        entry = CacheEntry(tuple(b for b in range(num_blocks) if owners[b] == i))
        set_pin_count(entry, pins[i])
        s.entries[KEYS[i]] = entry
        size = len(entry.block_ids)
        entries.append((KEYS[i], size, pins[i]))
        if pins[i] == 0:
            s.evictable_blocks += size
    side.build(s.policy, entries, choices)
    s.set_policy(s.policy)
    return s


#: What ``install``'s factory builds: the policy's name, and a policy bug to plant.
_config: dict[str, Any] = {"policy": "fifo", "bug": None}


def configure(policy: str = "fifo", bug: PlantedBug | None = None) -> None:
    """Make the registered factory build states under ``policy``, with ``bug`` planted
    (a policy bug: the state is built by the real policy, then re-typed). O(1)."""
    if policy not in EVICTION_POLICIES:
        raise ValueError(f"no such policy {policy!r}; registered: {sorted(EVICTION_POLICIES)}")
    adapter(policy)  # fails here, naming the missing adapter module, rather than mid-search
    _config["policy"], _config["bug"] = policy, bug


def _symbolic_state(factory: Any) -> CacheState:
    """CrossHair's factory for CacheState: bounded symbolic choices, then ``build_state``."""
    from crosshair.libimpl.builtinslib import SymbolicBool, SymbolicInt
    from crosshair.tracers import ResumedTracing

    space = factory.space

    def bounded(suffix: str, lo: int, hi: int | None) -> Any:
        # A solver-side bound: no path is spent on (and discarded for) out-of-range values.
        value = SymbolicInt(factory.get_suffixed_varname(suffix))
        space.add(value.var >= lo)
        if hi is not None:
            space.add(value.var <= hi)
        return value

    policy: str = _config["policy"]
    num_blocks = bounded("_num_blocks", 0, MAX_BLOCKS)
    num_entries = bounded("_num_entries", 0, MAX_ENTRIES)
    owners = [bounded(f"_owner{b}", -1, None) for b in range(MAX_BLOCKS)]
    for owner in owners:
        space.add(owner.var < num_entries.var)
    pins = [bounded(f"_pin{i}", -1, MAX_PIN) for i in range(MAX_ENTRIES)]
    free_descending: Any = SymbolicBool(factory.get_suffixed_varname("_free_descending"))
    side = adapter(policy)
    choices = [bounded(f"_{policy}{i}", lo, hi) for i, (lo, hi) in enumerate(side.choice_bounds)]
    for i, j in side.at_most:
        space.add(choices[i].var <= choices[j].var)
    with ResumedTracing():  # type: ignore[no-untyped-call]
        s = build_state(num_blocks, num_entries, owners, pins, free_descending, policy, choices)
    bug: PlantedBug | None = _config["bug"]
    if bug is not None:
        bug.plant(s)
    # Bound (again) with tracing off: the hooks are then the plain methods (for fifo,
    # the OrderedDict's own), not whatever CrossHair substitutes while tracing.
    s.set_policy(s.policy)
    return s


_RAISES_SECTION = re.compile(r"^[ \t]*Raises:[ \t]*\n((?:[ \t]+\S.*(?:\n|$))+)", re.MULTILINE)
_RAISES_ITEM = re.compile(r"^[ \t]+(\w+):", re.MULTILINE)


def documented_raises(fn: Callable[..., Any]) -> set[type[BaseException]]:
    """The exception types a Google-style ``Raises:`` section lists, minus TypeError."""
    found: set[type[BaseException]] = set()
    names = getattr(inspect.unwrap(fn), "__globals__", {})
    for section in _RAISES_SECTION.findall(getattr(fn, "__doc__", None) or ""):
        for name in _RAISES_ITEM.findall(section):
            # The function's module, then the builtins, then this package's typed errors.
            exc = names.get(name) or getattr(builtins, name, None) or getattr(errors, name, None)
            if isinstance(exc, type) and issubclass(exc, BaseException) and exc is not TypeError:
                found.add(exc)
    return found


#: Paths cut short by their CPU deadline and solver queries given up on for time.
_time_outs = [0]
#: Z3's reasons for an unknown answer that mean "out of time" (a wall-clock limit).
_TIME_REASONS = ("timeout", "canceled")


def time_outs() -> int:
    """How many paths or solver queries CrossHair abandoned for time since ``install``
    (compare before and after an analysis). O(1)."""
    return _time_outs[0]


def _count_time_outs() -> None:
    """Wrap the two places CrossHair gives up for time so that each one is counted."""
    from crosshair import statespace
    from crosshair.util import PathTimeout, UnknownSatisfiability

    check_timeout = statespace.StateSpace.check_timeout
    solver_is_sat = statespace.solver_is_sat

    def counted_check_timeout(space: Any) -> None:
        try:
            check_timeout(space)  # type: ignore[no-untyped-call]
        except PathTimeout:
            _time_outs[0] += 1
            raise

    def counted_solver_is_sat(solver: Any, *exprs: Any) -> bool:
        try:
            return bool(solver_is_sat(solver, *exprs))
        except UnknownSatisfiability:
            if any(r in str(solver.reason_unknown()) for r in _TIME_REASONS):
                _time_outs[0] += 1
            raise

    statespace.StateSpace.check_timeout = counted_check_timeout  # type: ignore[method-assign]
    # StateSpace looks this name up in its module at each query.
    statespace.solver_is_sat = counted_solver_is_sat


_installed = False


def install() -> None:
    """Register the CacheState factory and the ``Raises:`` reader with CrossHair, and
    count its time-outs (once).

    The factory builds states as ``configure`` last said (fifo, no bug, by default).
    """
    global _installed
    if _installed:
        return
    # Importing core_and_libs (re)sets CrossHair's type registry: do it before registering.
    import crosshair.condition_parser as parser
    import crosshair.core_and_libs  # noqa: F401
    from crosshair.core import register_type

    register_type(CacheState, _symbolic_state)
    sphinx_raises = parser.parse_sphinx_raises

    def all_raises(fn: Callable[..., Any]) -> set[type[BaseException]]:
        return set(sphinx_raises(fn)) | documented_raises(fn)

    # The icontract parser looks this name up in its module at each call.
    parser.parse_sphinx_raises = all_raises
    _count_time_outs()
    _installed = True


# --------------------------------------------------------------------------
# One job's analysis, inside the worker: one ConditionResult per condition.


def check_job(
    policy: str,
    unit: str,
    paths: int,
    per_path_timeout: float,
    planted: bool,
    stop_at_first: bool,
    cap: float | None = None,
) -> Iterator[ConditionResult]:
    """Analyse each postcondition of the job's target (preconditions assumed), in order,
    each with a budget of ``paths`` paths and a CPU cap of ``cap`` seconds (default
    ``cap_seconds(paths)``). O(conditions * paths)."""
    from crosshair.options import AnalysisKind, AnalysisOptionSet

    target, expect = _configure(policy, unit, planted)
    options = AnalysisOptionSet(
        analysis_kind=[AnalysisKind.icontract],
        max_iterations=paths,
        per_condition_timeout=cap_seconds(paths) if cap is None else cap,
        per_path_timeout=per_path_timeout,
        # 0: never stop early for lack of new branches; the budget alone decides.
        max_uninteresting_iterations=0,
    )
    for (condition, check), checkable in _checkables(target, options, policy, expect):
        result = _analyse(checkable, paths)
        yield ConditionResult(policy, unit, target, condition, check, **result)
        if stop_at_first and result["outcome"] == "counterexample":
            return


def _configure(policy: str, unit: str, planted: bool) -> tuple[str, frozenset[str] | None]:
    """Point the plugin's factory at the job; its target, and (planted) the conditions
    the bug is expected to break (None: every condition). O(1)."""
    from .planted import by_name

    if planted:
        bug = by_name(unit)
        configure(policy, bug)
        return bug.target, bug.expected(policy)
    if unit not in TRANSITIONS:
        raise ValueError(f"not a transition: {unit!r}")
    configure(policy)
    return f"embedding_cache.transitions.{unit}", None


def _checkables(
    target: str, options: Any, policy: str, expect: frozenset[str] | None
) -> list[tuple[tuple[str, str], Any]]:
    """The target's conditions as CrossHair checks them, each with its (name, function
    name); with ``expect``, only those it names. O(conditions)."""
    from crosshair.core import ConditionCheckable
    from crosshair.core_and_libs import analyze_function
    from crosshair.fnutil import load_by_qualname

    found = analyze_function(load_by_qualname(target), options)
    checkables = [c for c in found if isinstance(c, ConditionCheckable)]
    if not checkables or len(checkables) != len(found):
        # None: no contract registered; another kind: CrossHair could not parse one.
        raise RuntimeError(f"{target}: CrossHair found no checkable contract: {found}")
    named = [(_condition_names(c, policy), c) for c in checkables]
    if expect is not None:
        # Only the conditions the bug is expected to break: a miss costs each one's
        # whole budget, and a counterexample to another would not be the expected catch.
        named = [nc for nc in named if nc[0][0] in expect]
        if not named:
            raise RuntimeError(f"{target} has no condition named {sorted(expect)}")
    return named


def _analyse(checkable: Any, paths: int) -> dict[str, Any]:
    """What ``ConditionCheckable.analyze`` does, keeping what the report needs: the
    outcome, the paths confirmed and started, CPU seconds, time-outs. O(paths)."""
    from collections import Counter
    from time import process_time

    from crosshair.condition_parser import condition_parser
    from crosshair.core import analyze_calltree

    opts = checkable.options
    opts.stats = Counter()  # CrossHair counts paths started ("num_paths") into it
    timed_out = time_outs()
    begin = process_time()
    with condition_parser(opts.analysis_kind):
        analysis = analyze_calltree(opts, checkable.conditions)
    seconds = process_time() - begin
    started = opts.stats["num_paths"]
    capped = started < paths and not opts.stats["exhaustion"]  # nor refuted: see _outcome
    outcome, message = _outcome(analysis, capped)
    return {
        "outcome": outcome,
        "paths": analysis.num_confirmed_paths,
        "seconds": round(seconds, 3),
        "message": message,
        "iterations": started,
        "time_outs": time_outs() - timed_out,
    }


def _outcome(analysis: Any, capped: bool) -> tuple[ConditionOutcome, str]:
    """The outcome of one condition's analysis and its message; ``capped``: the search
    stopped at its CPU cap (before its budget, with paths left). O(messages)."""
    from crosshair.statespace import MessageType, VerificationStatus

    problems = [m for m in analysis.messages if m.state > MessageType.PRE_UNSAT]
    if problems:
        error = any(m.state == MessageType.SYNTAX_ERR for m in problems)
        return ("error" if error else "counterexample"), problems[0].message
    confirmed = analysis.verification_status is VerificationStatus.CONFIRMED
    if capped and not confirmed:
        # Inconclusive, "vacuous" included: CrossHair says so of a search stopped
        # before any path got past the preconditions.
        return "gave_up", ""
    if any(m.state == MessageType.PRE_UNSAT for m in analysis.messages):
        return "vacuous", ""
    return ("confirmed" if confirmed else "unrefuted"), ""


def _condition_names(checkable: Any, policy: str) -> tuple[str, str]:
    """(name, function name) of the icontract condition a checkable analyses; a
    policy order condition is named after ``policy``'s order property."""
    from embedding_cache.policies import EVICTION_POLICIES

    # CrossHair's icontract parser evaluates each postcondition through
    # functools.partial(post_eval, <icontract Contract>, ...).
    evaluate = checkable.conditions.post[0].evaluate
    for arg in getattr(evaluate, "args", ()):
        condition = getattr(arg, "condition", None)
        if condition is not None:
            name = getattr(condition, "__name__", "<lambda>")
            description = str(getattr(arg, "description", None) or name)
            if getattr(arg, "error", None) is not None:  # contracts._order_post
                description = EVICTION_POLICIES[policy].order_property
            return (description, name)
    return ("<unnamed>", "<unknown>")
