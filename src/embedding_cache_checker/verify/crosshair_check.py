"""Run CrossHair over the transitions' icontract contracts, per policy, and report what it found.

``run_crosshair`` starts worker processes (``python -m`` this module) with
``EMBEDDING_CACHE_CHECKED=full``: in that build every transition carries its
own postconditions plus every named invariant as a precondition and a
postcondition, so CrossHair checks the inductive step -- from any state
satisfying every invariant, the transition preserves them all and meets its
own postconditions. The workers use CrossHair's Python API as
``crosshair check --analysis_kind=icontract`` does, one named condition at a
time with a CPU-time budget each, after ``crosshair_plugin.install()`` has
taught CrossHair to build non-empty states and to accept documented raises.

The unit of work is a job: (policy, transition) for the clean check -- the
real transition over states whose policy is that one
(``crosshair_plugin.configure``) -- or (policy, planted bug name) with
``planted=True``: each bug of ``planted.for_policy(policy, "crosshair")``
(the shared ones and the policy's own) must yield a counterexample (caught /
planted) to a condition it is expected to break (``bug.expected(policy)``).
Only those conditions are analysed, and a job stops at its first
counterexample, since one suffices to catch it.
A transition bug's target is its broken body; a policy bug's is the real
transition, over states whose policy is re-typed as the broken one.

Workers take jobs from a shared queue (each reads job lines on stdin and
prints one JSON line per condition, then an end-of-job line), so two
workers stay busy until the last job.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

#: The transitions CrossHair checks (every function in ``transitions`` with a contract).
TRANSITIONS: tuple[str, ...] = ("alloc", "pin_if_ready", "unpin", "pin", "mark_ready", "discard")
#: Their dotted names.
CLEAN_TARGETS: tuple[str, ...] = tuple(f"embedding_cache.transitions.{t}" for t in TRANSITIONS)
#: CPU seconds per condition for the clean check (was 5 with fifo alone): 3 policies x
#: 64 conditions, about 290 CPU s, so under 3 minutes on 2 otherwise idle workers
#: (nearly every condition uses its whole budget, 27 to 100+ paths each).
PER_CONDITION_SECONDS = 1.5
#: CPU seconds per condition for planted bugs: a miss costs the whole budget, so be
#: generous (each job stops at its first counterexample). Measured: the 50 planted
#: jobs take about 100 CPU s in all, none more than 15.
PLANTED_SECONDS = 30.0
#: CPU seconds per execution path; no path of a transition over a small state needs more.
PER_PATH_SECONDS = 2.0
#: Worker processes (the CI machine has 2 cores).
DEFAULT_JOBS = 2
#: The line a worker prints after each job.
_END_OF_JOB = "--"

Outcome = Literal["counterexample", "confirmed", "unrefuted", "vacuous", "error"]


@dataclass(frozen=True)
class ConditionResult:
    """What CrossHair said about one condition of one job."""

    policy: str  # the policy of the states CrossHair built
    unit: str  # the transition (clean run) or the planted bug's name
    target: str  # dotted name of the checked function
    condition: str  # the condition's name (spec/NAMES.md): its icontract description
    check: str  # the condition function's own name, e.g. "mark_ready_counts_blocks"
    outcome: Outcome  # confirmed: all paths exhausted; unrefuted: budget spent, none found
    paths: int  # execution paths CrossHair completed
    seconds: float  # CPU seconds spent
    message: str  # the counterexample or error, as CrossHair words it ("" otherwise)


@dataclass(frozen=True)
class PolicyTally:
    """One policy's figures in a run."""

    jobs: int  # transitions (clean) or planted bugs checked
    conditions: int
    counterexamples: int
    caught: int  # jobs with a counterexample (planted: bugs caught)
    cpu_seconds: float


@dataclass(frozen=True)
class CrosshairResult:
    """The merged report of one CrossHair run."""

    functions: int  # jobs run: (policy, transition) or (policy, planted bug) pairs
    conditions: int  # conditions checked (one analysis each)
    counterexamples: int  # conditions with a counterexample
    details: tuple[ConditionResult, ...]
    seconds: float  # wall-clock seconds of the whole run

    @property
    def ok(self) -> bool:
        """True when nothing was refuted, nothing was vacuous and nothing errored."""
        return all(d.outcome in ("confirmed", "unrefuted") for d in self.details)

    @property
    def cpu_seconds(self) -> float:
        """CPU seconds the analyses spent (all workers)."""
        return sum(d.seconds for d in self.details)

    def caught(self) -> dict[tuple[str, str], ConditionResult | None]:
        """Per job (policy, unit), its first counterexample (None when none was found)."""
        first: dict[tuple[str, str], ConditionResult | None] = {}
        for d in self.details:
            key = (d.policy, d.unit)
            first.setdefault(key, None)
            if d.outcome == "counterexample" and first[key] is None:
                first[key] = d
        return first

    def per_policy(self) -> dict[str, PolicyTally]:
        """The figures of each policy, in run order."""
        caught = self.caught()
        out: dict[str, PolicyTally] = {}
        for policy in dict.fromkeys(d.policy for d in self.details):
            mine = [d for d in self.details if d.policy == policy]
            jobs = [k for k in caught if k[0] == policy]
            out[policy] = PolicyTally(
                jobs=len(jobs),
                conditions=len(mine),
                counterexamples=sum(d.outcome == "counterexample" for d in mine),
                caught=sum(caught[k] is not None for k in jobs),
                cpu_seconds=round(sum(d.seconds for d in mine), 1),
            )
        return out

    def summary(self) -> list[str]:
        """One line per job, then one per policy: conditions, counterexamples, paths, CPU s."""
        lines = []
        for policy, unit in self.caught():
            mine = [d for d in self.details if (d.policy, d.unit) == (policy, unit)]
            found = [d for d in mine if d.outcome == "counterexample"]
            first = f"  first: {found[0].condition} ({found[0].check})" if found else ""
            lines.append(
                f"{policy:7} {unit:24} {len(mine):3} conditions "
                f"{len(found):3} counterexamples {sum(d.paths for d in mine):6} paths "
                f"{sum(d.seconds for d in mine):6.1f} cpu-s{first}"
            )
        for policy, t in self.per_policy().items():
            lines.append(
                f"{policy:7} total: {t.jobs} jobs, {t.conditions} conditions, "
                f"{t.counterexamples} counterexamples, {t.caught}/{t.jobs} with one, "
                f"{t.cpu_seconds:.1f} cpu-s"
            )
        return lines

    def to_json(self) -> dict[str, Any]:
        """A plain-dict form for ``--json`` reports."""
        return {
            **asdict(self),
            "ok": self.ok,
            "cpu_seconds": round(self.cpu_seconds, 1),
            "per_policy": {p: asdict(t) for p, t in self.per_policy().items()},
        }


def planted_jobs(policies: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """(policy, bug name) for every planted bug CrossHair must catch, policy by policy."""
    from embedding_cache.policies import EVICTION_POLICIES

    from .planted import for_policy

    return [
        (policy, bug.name)
        for policy in (policies or list(EVICTION_POLICIES))
        for bug in for_policy(policy, "crosshair")
    ]


def clean_jobs(
    policies: Sequence[str] | None = None, transitions: Sequence[str] = TRANSITIONS
) -> list[tuple[str, str]]:
    """(policy, transition) for every transition under every policy."""
    from embedding_cache.policies import EVICTION_POLICIES

    return [(p, t) for p in (policies or list(EVICTION_POLICIES)) for t in transitions]


def run_crosshair(
    jobs_to_run: Sequence[tuple[str, str]] | None = None,
    timeout: float | None = None,
    per_path_timeout: float = PER_PATH_SECONDS,
    jobs: int = DEFAULT_JOBS,
    planted: bool = False,
    stop_at_first: bool | None = None,
) -> CrosshairResult:
    """Check ``jobs_to_run`` with CrossHair in ``jobs`` worker processes; merge their reports.

    ``jobs_to_run``: (policy, transition) pairs, default ``clean_jobs()``; with
    ``planted``, (policy, bug name) pairs, default ``planted_jobs()``.
    ``timeout`` is the CPU-time budget per condition (CrossHair's
    ``--per_condition_timeout``; default ``PER_CONDITION_SECONDS``, or
    ``PLANTED_SECONDS`` with ``planted``). With ``planted`` only the conditions
    each bug is expected to break are analysed, and (unless ``stop_at_first``
    is False) a job stops at its first counterexample. Runs for up to about
    conditions * timeout / jobs seconds.
    """
    if stop_at_first is None:
        stop_at_first = planted
    if timeout is None:
        timeout = PLANTED_SECONDS if planted else PER_CONDITION_SECONDS
    if jobs_to_run is None:
        jobs_to_run = planted_jobs() if planted else clean_jobs()
    start = time.monotonic()
    env = {**os.environ, "EMBEDDING_CACHE_CHECKED": "full"}
    cmd = [sys.executable, "-m", __name__, "--timeout", str(timeout)]
    cmd += ["--per-path-timeout", str(per_path_timeout)]
    cmd += [*(["--planted"] if planted else []), *(["--stop-at-first"] if stop_at_first else [])]
    todo: queue.SimpleQueue[tuple[str, str]] = queue.SimpleQueue()
    for job in jobs_to_run:
        todo.put(job)
    details: list[ConditionResult] = []
    failures: list[str] = []

    def work() -> None:
        # stderr goes to a file: a pipe nobody reads until the end could fill and block.
        with tempfile.TemporaryFile(mode="w+") as errors:
            proc = subprocess.Popen(
                cmd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
            )
            assert proc.stdin is not None and proc.stdout is not None
            try:
                while True:
                    try:
                        policy, unit = todo.get_nowait()
                    except queue.Empty:
                        break
                    try:
                        proc.stdin.write(f"{policy} {unit}\n")
                        proc.stdin.flush()
                    except BrokenPipeError:
                        break  # the worker died: its stderr says why
                    for line in proc.stdout:
                        if line.strip() == _END_OF_JOB:
                            break
                        details.append(ConditionResult(**json.loads(line)))
                    else:
                        break  # the worker died: its stderr says why
            finally:
                with contextlib.suppress(BrokenPipeError):
                    proc.stdin.close()
                code = proc.wait()
                errors.seek(0)
                if code != 0:
                    failures.append(f"CrossHair worker failed ({code}):\n{errors.read()[-4000:]}")

    threads = [threading.Thread(target=work) for _ in range(max(1, jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise RuntimeError("\n".join(failures))
    order = {job: i for i, job in enumerate(jobs_to_run)}
    details.sort(key=lambda d: order[(d.policy, d.unit)])
    return CrosshairResult(
        functions=len({(d.policy, d.unit) for d in details}),
        conditions=len(details),
        counterexamples=sum(d.outcome == "counterexample" for d in details),
        details=tuple(details),
        seconds=time.monotonic() - start,
    )


# --------------------------------------------------------------------------
# The worker: runs inside the full build, one JSON line per condition.


def _check_job(
    policy: str,
    unit: str,
    timeout: float,
    per_path_timeout: float,
    planted: bool,
    stop_at_first: bool,
) -> Iterator[ConditionResult]:
    """Analyse each postcondition of the job's target (preconditions assumed), in order."""
    from time import process_time

    from crosshair.condition_parser import condition_parser
    from crosshair.core import ConditionCheckable, analyze_calltree
    from crosshair.core_and_libs import analyze_function
    from crosshair.fnutil import load_by_qualname
    from crosshair.options import AnalysisKind, AnalysisOptionSet
    from crosshair.statespace import MessageType, VerificationStatus

    from .crosshair_plugin import configure
    from .planted import by_name

    expect: frozenset[str] = frozenset()
    if planted:
        bug = by_name(unit)
        target, expect = bug.target, bug.expected(policy)
        configure(policy, bug)
    else:
        if unit not in TRANSITIONS:
            raise ValueError(f"not a transition: {unit!r}")
        target = f"embedding_cache.transitions.{unit}"
        configure(policy)
    options = AnalysisOptionSet(
        analysis_kind=[AnalysisKind.icontract],
        per_condition_timeout=timeout,
        per_path_timeout=per_path_timeout,
    )
    found = analyze_function(load_by_qualname(target), options)
    checkables = [c for c in found if isinstance(c, ConditionCheckable)]
    if not checkables or len(checkables) != len(found):
        # None: no contract registered; another kind: CrossHair could not parse one.
        raise RuntimeError(f"{target}: CrossHair found no checkable contract: {found}")
    named = [(_condition_names(c, policy), c) for c in checkables]
    if planted:
        # Only the conditions the bug is expected to break: a miss costs each one's
        # whole budget, and a counterexample to another would not be the expected catch.
        named = [nc for nc in named if nc[0][0] in expect]
        if not named:
            raise RuntimeError(f"{unit}: {target} has no condition named {sorted(expect)}")
    for (condition, check), checkable in named:
        # What ConditionCheckable.analyze does, keeping the path count and status.
        opts = checkable.options
        begin = process_time()
        opts.deadline = begin + opts.per_condition_timeout
        with condition_parser(opts.analysis_kind):
            analysis = analyze_calltree(opts, checkable.conditions)
        seconds = process_time() - begin
        problems = [m for m in analysis.messages if m.state > MessageType.PRE_UNSAT]
        if problems:
            outcome: Outcome = "counterexample"
            if any(m.state == MessageType.SYNTAX_ERR for m in problems):
                outcome = "error"
        elif any(m.state == MessageType.PRE_UNSAT for m in analysis.messages):
            outcome = "vacuous"
        elif analysis.verification_status is VerificationStatus.CONFIRMED:
            outcome = "confirmed"
        else:
            outcome = "unrefuted"
        yield ConditionResult(
            policy=policy,
            unit=unit,
            target=target,
            condition=condition,
            check=check,
            outcome=outcome,
            paths=analysis.num_confirmed_paths,
            seconds=round(seconds, 3),
            message=problems[0].message if problems else "",
        )
        if stop_at_first and outcome == "counterexample":
            return


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


def _worker(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__name__}")
    parser.add_argument("--timeout", type=float, default=PER_CONDITION_SECONDS)
    parser.add_argument("--per-path-timeout", type=float, default=PER_PATH_SECONDS)
    parser.add_argument("--planted", action="store_true", help="jobs name planted bugs")
    parser.add_argument("--stop-at-first", action="store_true", help="one counterexample a job")
    parser.add_argument(
        "jobs", nargs="*", help="POLICY:UNIT jobs; without any, read 'POLICY UNIT' lines on stdin"
    )
    args = parser.parse_args(argv)

    from embedding_cache import build

    if not build.FULL_SWEEP:  # without the sweep the check would be vacuous
        print("the CrossHair worker needs EMBEDDING_CACHE_CHECKED=full", file=sys.stderr)
        return 2
    from crosshair.auditwall import engage_auditwall

    from .crosshair_plugin import install

    install()
    engage_auditwall()  # as `crosshair check` does: no side effects from analysed code
    lines: Iterator[str] = (
        (job.replace(":", " ", 1) for job in args.jobs) if args.jobs else iter(sys.stdin)
    )
    for line in lines:
        if not line.strip():
            continue
        policy, unit = line.split()
        results = _check_job(
            policy, unit, args.timeout, args.per_path_timeout, args.planted, args.stop_at_first
        )
        for result in results:
            print(json.dumps(asdict(result)), flush=True)
        print(_END_OF_JOB, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_worker(sys.argv[1:]))
