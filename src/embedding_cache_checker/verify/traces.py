"""Trace validation (conformance link 2): check recorded traces against the spec with TLC.

A batch of traces from ``TracedEmbeddingCache`` is written into a generated
module ``TraceData`` as the definition ``Traces`` and checked by
``tla/trace/EmbeddingCacheTrace.tla``, which extends it and ``TracePolicy``:
the module selecting the cache's eviction policy, generated from
tla/trace/TracePolicy.tla (tla/README.md, "For the conformance checks"). TLC
follows the single path each trace allows, side by side, without deadlock
checking; its invariant ``TraceProgress`` prints how far each path got, so a
trace is rejected at the first step the spec cannot take, and one JVM start
serves the whole batch (a check of a short trace is mostly the JVM's start).
(This TLC build has no Json/IOUtils modules, so the traces travel as TLA+
text. They are a definition in an extended module, not a CONSTANT bound with
``<-``: TLC evaluates such a definition once, but re-evaluates a substituted
constant at every reference, which made checking quadratic in the trace's
length: docs/MEASURED.md, "Trace validation: a trace is a definition".)

Each step's ``post`` record carries the abstract state after the step:
``entries``, ``free``, ``held`` and one field per policy variable, named as
the policy's TLA+ module names it (``PolicyChecks.abstract``): a sequence
as ``<<...>>``, a function as ``(k :> v @@ ...)``. TLC is started through
``tlc.runner.run_tlc`` by the launcher, ``tlc.process.TlcProcess``, in a
temporary directory holding every module of tla/'s subfolders and the
generated ones.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from embedding_cache.policies import EvictionPolicy, PolicySpec, make_policy

from ..abstraction import AbstractState
from ..tlc import patterns
from ..tlc.output import TlcOutcome
from ..tlc.runner import run_tlc
from ..tracing import LEASE_STEPS, LeaseState, TracedEmbeddingCache, TraceStep
from .alloc_rule import SEED_RULE, AllocRule, rule_of_cache
from .model_code import code_constants
from .plans import PolicyPlan, plan_for

V = TypeVar("V")

#: The root module TLC checks, and the generated modules it extends.
TRACE_SPEC, TRACE_DATA, TRACE_POLICY = "EmbeddingCacheTrace", "TraceData", "TracePolicy"
#: The root that checks a trace with lease steps (it extends TRACE_SPEC).
LEASE_TRACE_SPEC = "EmbeddingCacheLeaseTrace"


@dataclass
class TraceVerdict:
    """TLC's verdict on one trace."""

    steps: int
    accepted: bool
    matched: int  # steps the spec accepted before the first it could not take
    first_rejected: TraceStep | None
    seconds: float  # the TLC run's wall time: its batch's, shared by the batch's traces
    detail: str = ""


def tla_string(text: str) -> str:
    """A TLA+ string literal for ``text`` (backslash, quote and control escapes)."""
    escaped = (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
        .replace("\f", "\\f")
    )
    return f'"{escaped}"'


def tla_value(value: Any, function: bool = False) -> str:
    """A Python value as TLA+ text: str, bool, int, a tuple as a sequence; with
    ``function``, a tuple of (key, value) pairs (``policy_view``'s form of a dict)
    or a mapping as a function (``<<>>`` when empty, which TLC equates with the
    empty function). O(size of the value).

    Raises:
        TypeError: ``value`` has no TLA+ form here.
    """
    if function:
        pairs = list(value.items()) if isinstance(value, Mapping) else list(value)
        if not pairs:
            return "<<>>"
        return "(" + " @@ ".join(f"{tla_value(k)} :> {tla_value(v)}" for k, v in pairs) + ")"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return tla_string(value)
    if isinstance(value, (tuple, list)):
        return "<<" + ", ".join(tla_value(v) for v in value) + ">>"
    raise TypeError(f"no TLA+ form for {value!r}")


def function_variables(policy: EvictionPolicy) -> frozenset[str]:
    """The policy variables that are functions (dicts in ``abstract()``), not sequences."""
    variables = policy.checks().abstract()
    return frozenset(name for name, v in variables.items() if isinstance(v, Mapping))


def tla_post(post: AbstractState, functions: frozenset[str], door: tuple[str, ...]) -> str:
    """A step's ``post`` record (the abstract state after it) as TLA+ text: ``entries``
    (key -> ``[pins, blocks]``, blocks a count), one field per policy variable
    (``functions``: those written as functions), ``free``, ``held`` and ``door``.
    O(size of the state)."""
    if post.entries:
        entries = " @@ ".join(
            f"{tla_string(k)} :> [pins |-> {e.pins}, blocks |-> {e.blocks}]"
            for k, e in post.entries
        )
        entries = f"({entries})"
    else:
        entries = "<<>>"
    fields = [f"entries |-> {entries}"]
    for name, value in post.policy:
        fields.append(f"{name} |-> {tla_value(value, name in functions)}")
    fields += [
        f"free |-> {post.free}",
        f"held |-> {tla_value(post.held)}",
        f"door |-> {tla_value(door)}",
    ]
    return f"[{', '.join(fields)}]"


def _tla_step(step: TraceStep, functions: frozenset[str]) -> str:
    blocks = ", ".join(str(b) for b in step.block_ids or ())
    post = tla_post(step.post, functions, step.door)
    return (
        f"[op |-> {tla_string(step.op)}, key |-> {tla_string(step.key)}, "
        f"n |-> {step.n_blocks or 0}, result |-> {tla_string(step.result)}, "
        f"blocks |-> {{{blocks}}}, post |-> {post}]"
    )


_CONSTANTS_LINE = re.compile(r"^CONSTANTS? .*$", re.MULTILINE)
_INSTANCE = re.compile(r"^INSTANCE \w+", re.MULTILINE)


def trace_policy_template(tla_dir: Path) -> str:
    """The text of tla/'s ``TracePolicy.tla`` (in its subfolder trace/, or wherever
    under ``tla_dir`` it is: module names are unique there). O(files under tla_dir).

    Raises:
        FileNotFoundError: no ``TracePolicy.tla`` under ``tla_dir``.
    """
    found = sorted(tla_dir.rglob(f"{TRACE_POLICY}.tla"))
    if not found:
        raise FileNotFoundError(f"no {TRACE_POLICY}.tla under {tla_dir}")
    return found[0].read_text(encoding="utf-8")


def policy_module(template: str, plan: PolicyPlan) -> str:
    """The text of module ``TracePolicy`` for ``plan``'s policy: ``template``
    (tla/trace/TracePolicy.tla, which selects fifo) with the policy's TLA+ module (its plan's
    ``trace_module``, from the manifest) instantiated and its constants (``tla_constants``)
    declared, as that file's header shows. O(len(template)).

    Raises:
        ValueError: ``template`` has no CONSTANTS line or INSTANCE to replace.
    """
    constants = ", ".join(["Keys", "N", "MaxPins", *plan.tla_constants])
    text, found = _CONSTANTS_LINE.subn(lambda _: f"CONSTANTS {constants}", template, count=1)
    text, instances = _INSTANCE.subn(f"INSTANCE {plan.trace_module}", text, count=1)
    if not found or not instances:
        raise ValueError(f"{TRACE_POLICY}.tla has no CONSTANTS line or INSTANCE to replace")
    return text


def copy_modules(tla_dir: Path, work: Path, generated: Sequence[str]) -> None:
    """Every module of tla/'s subfolders into ``work``, side by side (the launcher's
    search path there: every folder under it), but the placeholders of the modules a
    run generates (``generated``, by module name). O(modules)."""
    for module in tla_dir.rglob("*.tla"):
        if module.stem not in generated:
            shutil.copy(module, work / module.name)


def has_leases(trace: Sequence[TraceStep]) -> bool:
    """True when ``trace`` has a lease step: it is checked by ``LEASE_TRACE_SPEC``. O(steps)."""
    return any(step.op in LEASE_STEPS for step in trace)


def _whole(value: float | None, what: str) -> int:
    if value is None or value != int(value):
        raise ValueError(
            f"lease trace validation needs whole-number times (a fake clock); {what} is {value!r}"
        )
    return int(value)


def unit_ticks(trace: Sequence[TraceStep]) -> list[TraceStep]:
    """``trace`` with each clock move of d written as d steps of one (the spec's Tick
    moves the clock by one). O(steps + the trace's last clock).

    Raises:
        ValueError: a tick to a time that is not a whole number.
    """
    out: list[TraceStep] = []
    now = 0
    for step in trace:
        if step.op != "tick" or step.leases is None:
            out.append(step)
            continue
        to = _whole(step.n_blocks, "a clock reading")
        for moment in range(now + 1, to + 1):
            view = step.leases._replace(now=moment)
            out.append(step._replace(n_blocks=moment, leases=view))
        now = to
    return out


def _tla_leases(view: LeaseState) -> str:
    held = " @@ ".join(
        f"{i} :> [key |-> {tla_string(k)}, deadline |-> {_whole(d, 'a deadline')}]"
        for i, k, d in view.held
    )
    plain = " @@ ".join(f"{tla_string(k)} :> {n}" for k, n in view.plain)
    return (
        f"[now |-> {_whole(view.now, 'a clock reading')}, "
        f"leases |-> {f'({held})' if held else '<<>>'}, "
        f"plain |-> {f'({plain})' if plain else '<<>>'}]"
    )


def _tla_lease_step(step: TraceStep, functions: frozenset[str]) -> str:
    head = (
        f"op |-> {tla_string(step.op)}, key |-> {tla_string(step.key)}, "
        f"n |-> {step.n_blocks or 0}, result |-> {tla_string(step.result)}, "
        f"lease |-> {-1 if step.lease is None else step.lease}"
    )
    if not step.seen or step.leases is None:
        return f"[{head}, known |-> FALSE]"
    blocks = ", ".join(str(b) for b in step.block_ids or ())
    return (
        f"[{head}, blocks |-> {{{blocks}}}, known |-> TRUE, "
        f"post |-> {tla_post(step.post, functions, step.door)}, "
        f"lpost |-> {_tla_leases(step.leases)}]"
    )


def _lease_bounds(trace: Sequence[TraceStep]) -> tuple[str, str]:
    """The ``TraceData`` definition of a lease trace's lease ids (the granted ones and a
    spare slot, -1) and the config lines binding them and the clock's bounds. O(steps)."""
    ids = sorted({-1} | {s.lease for s in trace if s.op == "lease" and s.lease is not None})
    seconds = [s.n_blocks or 0 for s in trace if s.op in ("lease", "renew_lease")]
    last = max([1] + [s.n_blocks or 0 for s in trace if s.op == "tick"])
    data = f"TraceLeaseIds == {{{', '.join(str(i) for i in ids)}}}\n"
    config = (
        "    LeaseIds <- TraceLeaseIds\n"
        f"    MaxTime = {last}\n"
        f"    MaxDuration = {max([0, *seconds])}\n"
    )
    return data, config


def _written(trace: Sequence[TraceStep], functions: frozenset[str]) -> str:
    """One trace of a batch as TLA+ text (a lease trace: its clock moves as unit ticks)."""
    if has_leases(trace):
        steps = ",\n    ".join(_tla_lease_step(step, functions) for step in unit_ticks(trace))
    else:
        steps = ",\n    ".join(_tla_step(step, functions) for step in trace)
    return f"<<\n    {steps}\n    >>"


def traces_module(
    traces: Sequence[Sequence[TraceStep]],
    num_blocks: int,
    eviction: PolicySpec = "fifo",
    constants: Sequence[str] = (),
    rule: AllocRule = SEED_RULE,
) -> tuple[str, str]:
    """The text of module ``TraceData`` defining ``Traces`` (the batch) and ``TraceKeys``
    (every key of the batch), and the config that checks ``EmbeddingCacheTrace`` with it
    -- or, for a batch of traces with lease steps (``has_leases``),
    ``EmbeddingCacheLeaseTrace`` with ``TraceLeaseIds`` and the clock's bounds too --
    setting the policy's TLA+ ``constants`` (its plan's ``tla_constants``) to the code
    policy's values, and the alloc ``rule``'s (``AllocRule.trace_constants``). A batch's
    bounds are the largest of its traces' (keys, pins, lease ids, clock, lease length):
    each trace's own bounds never refuse its steps, and wider ones do not either, since
    every step names its key, lease and time.
    O(total trace length * state size).

    Raises:
        ValueError: a batch mixing traces with and without lease steps, a lease trace
            whose clock readings are not whole numbers, or lease traces under a rule
            other than the seed's (the lease trace spec has none yet).
    """
    leases = {has_leases(trace) for trace in traces}
    if len(leases) > 1:
        raise ValueError("a batch of traces must be all with lease steps or all without")
    lease = leases == {True}
    if lease and rule.trace_constants() != SEED_RULE.trace_constants():
        raise ValueError(f"the lease trace spec checks the seed's alloc rule only, not {rule}")
    policy = make_policy(eviction, num_blocks)
    functions = function_variables(policy)
    steps = [step for trace in traces for step in trace]
    keys = sorted({step.key for step in steps if step.op != "tick"}) or ["none"]
    max_pins = max([1] + [e.pins for step in steps for _, e in step.post.entries])
    written = ",\n".join(_written(trace, functions) for trace in traces) or "<<>>"
    data = f"TraceKeys == {{{', '.join(tla_string(k) for k in keys)}}}\n"
    values = code_constants(policy, constants)
    extra = "".join(f"    {k} = {v}\n" for k, v in {**values, **rule.trace_constants()}.items())
    if lease:
        lease_data, lease_constants = _lease_bounds(unit_ticks(steps))
        data, extra = data + lease_data, extra + lease_constants
    module = (
        f"---- MODULE {TRACE_DATA} ----\nEXTENDS Integers, TLC\n{data}"
        f"Traces == <<\n{written}\n>>\n====\n"
    )
    config = (
        "CONSTANTS\n"
        f"    N = {num_blocks}\n"
        f"    MaxPins = {max_pins}\n"
        "    Keys <- TraceKeys\n"
        f"{extra}"
        f"SPECIFICATION {'LeaseTraceSpec' if lease else 'TraceSpec'}\n"
        "INVARIANT TraceProgress\n"
    )
    return module, config


def trace_module(
    trace: Sequence[TraceStep],
    num_blocks: int,
    eviction: PolicySpec = "fifo",
    constants: Sequence[str] = (),
    rule: AllocRule = SEED_RULE,
) -> tuple[str, str]:
    """``traces_module`` of the batch of one trace, ``trace``."""
    return traces_module([trace], num_blocks, eviction, constants, rule)


def _reached(raw_output: str) -> dict[int, int]:
    """The most steps each trace of a batch matched on any path (1-based trace index),
    from the lines ``TraceProgress`` printed. O(output)."""
    reached: dict[int, int] = {}
    for match in patterns.TRACE_PROGRESS.finditer(raw_output):
        index, matched = int(match.group("trace")), int(match.group("matched"))
        reached[index] = max(reached.get(index, 0), matched)
    return reached


def _run_batch(
    traces: Sequence[Sequence[TraceStep]],
    num_blocks: int,
    tla_dir: Path,
    eviction: PolicySpec,
    rule: AllocRule,
    timeout: float,
) -> list[TraceVerdict]:
    """One TLC run over ``traces`` (all with lease steps or all without): a verdict each,
    in order. O(TLC on one path per trace)."""
    plan = plan_for(make_policy(eviction, num_blocks).name, tla_dir)
    with tempfile.TemporaryDirectory(prefix="ec-trace-") as tmp:
        work = Path(tmp)
        copy_modules(tla_dir, work, (TRACE_DATA, TRACE_POLICY))
        module_text, config_text = traces_module(
            traces, num_blocks, eviction, plan.tla_constants, rule
        )
        (work / f"{TRACE_DATA}.tla").write_text(module_text)
        template = trace_policy_template(tla_dir)
        (work / f"{TRACE_POLICY}.tla").write_text(policy_module(template, plan))
        root = LEASE_TRACE_SPEC if has_leases(traces[0]) else TRACE_SPEC
        (work / f"{root}.cfg").write_text(config_text)
        run = run_tlc(
            f"{root}.tla",
            f"{root}.cfg",
            work,
            workers=1,
            check_deadlock=False,  # a rejected trace's path just ends; TraceProgress says where
            timeout=timeout,
            label="trace",
            quick_start=True,  # a trace check takes seconds: the JVM's start is most of it
        )
    counted = [unit_ticks(t) if has_leases(t) else list(t) for t in traces]
    if run.output.outcome is not TlcOutcome.PASS or run.exit_code != 0:
        why = "timed out" if run.timed_out else f"TLC failed ({run.output.outcome})"
        tail = "\n".join(run.raw_output.strip().splitlines()[-15:])
        return [
            TraceVerdict(len(t), False, 0, None, run.seconds, f"{why}:\n{tail}") for t in counted
        ]
    reached = _reached(run.raw_output)
    verdicts = []
    for index, trace in enumerate(counted, start=1):
        matched = reached.get(index, 0)
        if matched == len(trace):
            verdicts.append(TraceVerdict(len(trace), True, matched, None, run.seconds))
        else:  # the path ended before the trace did: TLC's deadlock, had it been checking
            verdicts.append(
                TraceVerdict(len(trace), False, matched, trace[matched], run.seconds, "deadlock")
            )
    return verdicts


#: One trace to validate: its steps, the pool size and the alloc rule it was recorded on.
Recorded = tuple[Sequence[TraceStep], int, AllocRule]


def validate_traces(
    traces: Sequence[Recorded],
    tla_dir: Path,
    eviction: PolicySpec = "fifo",
    timeout: float = 300.0,
    workers: int = 1,
) -> list[TraceVerdict]:
    """Run TLC on each (trace, pool size, rule) of ``traces``, all recorded with policy
    ``eviction``; a verdict each, in order: accepted iff the spec with that policy and
    rule can take every step of it in order. The traces are checked in batches, one TLC
    run per pool size, rule and kind (with lease steps or without), ``workers`` runs at
    a time, each within ``timeout`` seconds (each verdict carries its batch's seconds).
    A verdict counts the steps of a lease trace with its clock moves as unit ticks
    (``unit_ticks``). O(TLC on one path per trace, one JVM start per batch).

    Raises:
        PlanError: the manifest gives the policy no TLA+ module (``plans.plan_for``).
    """

    def check(indices: list[int]) -> list[TraceVerdict]:
        num_blocks, rule = traces[indices[0]][1:]
        batch = [traces[i][0] for i in indices]
        return _run_batch(batch, num_blocks, tla_dir, eviction, rule, timeout)

    keys = [  # the trace spec reads a rule's constants only (not its allocator)
        (num_blocks, tuple(rule.trace_constants().items()), has_leases(trace))
        for trace, num_blocks, rule in traces
    ]
    return map_batches(keys, check, workers)


def map_batches(
    keys: Sequence[Hashable], run: Callable[[list[int]], Sequence[V]], workers: int = 1
) -> list[V]:
    """``run`` on the indices of ``keys`` grouped by equal key (in first-seen order),
    ``workers`` groups at a time on threads (each group's work is a TLC process); each
    index's result, in index order. ``run`` must give one result per index it gets.
    O(len(keys)) here, plus the runs."""
    groups: dict[Hashable, list[int]] = {}
    for index, key in enumerate(keys):
        groups.setdefault(key, []).append(index)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        done = list(pool.map(run, groups.values()))
    results: dict[int, V] = {}
    for indices, group_results in zip(groups.values(), done, strict=True):
        results.update(zip(indices, group_results, strict=True))
    return [results[i] for i in range(len(keys))]


def validate_trace(
    trace: Sequence[TraceStep],
    num_blocks: int,
    tla_dir: Path,
    eviction: PolicySpec = "fifo",
    timeout: float = 300.0,
    rule: AllocRule = SEED_RULE,
) -> TraceVerdict:
    """``validate_traces`` of one trace: accepted iff the spec with policy ``eviction``
    and ``rule`` can take every step in order. O(TLC on one path of the trace's length).

    Raises:
        PlanError: the manifest gives the policy no TLA+ module (``plans.plan_for``).
    """
    return validate_traces([(trace, num_blocks, rule)], tla_dir, eviction, timeout)[0]


def validate_cache(
    cache: TracedEmbeddingCache, tla_dir: Path, timeout: float = 300.0
) -> TraceVerdict:
    """``validate_trace`` of a traced cache's whole trace, with its own policy and rule
    (``alloc_rule.rule_of_cache``)."""
    return validate_trace(
        cache.trace, cache.num_blocks, tla_dir, cache.eviction_spec, timeout, rule_of_cache(cache)
    )
