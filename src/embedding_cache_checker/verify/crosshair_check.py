"""Run CrossHair over the transitions' icontract contracts, per policy, and report what it found.

``run_crosshair`` starts worker processes (``python -m`` this module) with
``EMBEDDING_CACHE_CHECKED=full``: in that build every transition carries its
own postconditions plus every named invariant as a precondition and a
postcondition, so CrossHair checks the inductive step -- from any state
satisfying every invariant, the transition preserves them all and meets its
own postconditions. The workers use CrossHair's Python API as
``crosshair check --analysis_kind=icontract`` does (``crosshair_plugin.check_job``),
one named condition at a time with a budget of paths each (so that a catch
does not depend on the machine's load: see the budgets below), after
``crosshair_plugin.install()`` has taught CrossHair to build non-empty states
and to accept documented raises.

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
workers stay busy until the last job. Each job runs in a child forked from
its worker (``_in_fresh_child``), so what a job finds does not depend on
which jobs its worker ran before.
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
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from typing import IO, Any

from .crosshair_budget import (
    PER_CONDITION_SECONDS,
    PER_PATH_SECONDS,
    PLANTED_PATHS,
    TRANSITIONS,
    ConditionResult,
    paths_for,
)

#: Worker processes (the CI machine has 2 cores).
DEFAULT_JOBS = 2
#: The line a worker prints after each job.
_END_OF_JOB = "--"


@dataclass(frozen=True)
class PolicyTally:
    """One policy's figures in a run."""

    jobs: int  # transitions (clean) or planted bugs checked
    conditions: int
    counterexamples: int
    caught: int  # jobs with a counterexample (planted: bugs caught)
    cpu_seconds: float
    iterations: int = 0  # paths started, all conditions
    gave_up: int = 0  # jobs without a counterexample in which a condition hit its CPU cap


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
        """True when nothing was refuted, vacuous or errored, and nothing gave up."""
        return all(d.outcome in ("confirmed", "unrefuted") for d in self.details)

    @property
    def load_independent(self) -> bool:
        """True when no condition hit its CPU cap and no path or solver query was
        abandoned for time: then every outcome is what the path budgets alone decide."""
        return all(d.outcome != "gave_up" and d.time_outs == 0 for d in self.details)

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

    def gave_up(self) -> set[tuple[str, str]]:
        """The jobs (policy, unit) without a counterexample in which some condition hit
        its CPU cap: for a planted bug, CrossHair "gave up" on it; it did not miss it."""
        caught = self.caught()
        return {
            (d.policy, d.unit)
            for d in self.details
            if d.outcome == "gave_up" and caught[(d.policy, d.unit)] is None
        }

    def per_policy(self) -> dict[str, PolicyTally]:
        """The figures of each policy, in run order."""
        caught, gave_up = self.caught(), self.gave_up()
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
                iterations=sum(d.iterations for d in mine),
                gave_up=sum(k in gave_up for k in jobs),
            )
        return out

    def summary(self) -> list[str]:
        """One line per job, then one per policy: conditions, counterexamples, paths
        (confirmed / started), CPU s, and what gave up or timed out."""
        lines = []
        gave_up = self.gave_up()
        for policy, unit in self.caught():
            mine = [d for d in self.details if (d.policy, d.unit) == (policy, unit)]
            found = [d for d in mine if d.outcome == "counterexample"]
            first = f"  first: {found[0].condition} ({found[0].check})" if found else ""
            time_outs = sum(d.time_outs for d in mine)
            notes = (" GAVE UP (CPU cap)" if (policy, unit) in gave_up else "") + (
                f" {time_outs} time-outs" if time_outs else ""
            )
            lines.append(
                f"{policy:7} {unit:24} {len(mine):3} conditions "
                f"{len(found):3} counterexamples {sum(d.paths for d in mine):6}"
                f"/{sum(d.iterations for d in mine)} paths "
                f"{sum(d.seconds for d in mine):6.1f} cpu-s{notes}{first}"
            )
        for policy, t in self.per_policy().items():
            lines.append(
                f"{policy:7} total: {t.jobs} jobs, {t.conditions} conditions, "
                f"{t.counterexamples} counterexamples, {t.caught}/{t.jobs} with one, "
                f"{t.gave_up} gave up, {t.iterations} paths, {t.cpu_seconds:.1f} cpu-s"
            )
        return lines

    def to_json(self) -> dict[str, Any]:
        """A plain-dict form for ``--json`` reports."""
        return {
            **asdict(self),
            "ok": self.ok,
            "cpu_seconds": round(self.cpu_seconds, 1),
            "load_independent": self.load_independent,
            "gave_up": sorted(self.gave_up()),
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
    paths: int | None = None,
) -> CrosshairResult:
    """Check ``jobs_to_run`` with CrossHair in ``jobs`` worker processes; merge their reports.

    ``jobs_to_run``: (policy, transition) pairs, default ``clean_jobs()``; with
    ``planted``, (policy, bug name) pairs, default ``planted_jobs()``.
    ``paths`` is the budget per condition, in paths (CrossHair's
    ``max_iterations``); without it, ``timeout`` sizes it in CPU seconds at
    ``PATHS_PER_SECOND`` (``paths_for(timeout)``), and without either it is
    ``paths_for(PER_CONDITION_SECONDS)``, or ``PLANTED_PATHS`` with ``planted``.
    Each condition is also capped at ``cap_seconds(paths)`` CPU seconds (then it
    "gave up") and each path at ``per_path_timeout``. With ``planted`` only the
    conditions each bug is expected to break are analysed, and (unless
    ``stop_at_first`` is False) a job stops at its first counterexample. Costs
    about conditions * paths / PATHS_PER_SECOND CPU seconds, spread over ``jobs``.
    """
    if stop_at_first is None:
        stop_at_first = planted
    if paths is None:
        default = PLANTED_PATHS if planted else paths_for(PER_CONDITION_SECONDS)
        paths = default if timeout is None else paths_for(timeout)
    if jobs_to_run is None:
        jobs_to_run = planted_jobs() if planted else clean_jobs()
    start = time.monotonic()
    # A fixed hash seed: set and dict-of-set orders (and so the paths taken) repeat.
    env = {**os.environ, "EMBEDDING_CACHE_CHECKED": "full", "PYTHONHASHSEED": "0"}
    cmd = [sys.executable, "-m", __name__, "--paths", str(paths)]
    cmd += ["--per-path-timeout", str(per_path_timeout)]
    cmd += [*(["--planted"] if planted else []), *(["--stop-at-first"] if stop_at_first else [])]
    todo: queue.SimpleQueue[tuple[str, str]] = queue.SimpleQueue()
    for job in jobs_to_run:
        todo.put(job)
    details: list[ConditionResult] = []
    failures: list[str] = []
    threads = [
        threading.Thread(target=_serve, args=(cmd, env, todo, details, failures))
        for _ in range(max(1, jobs))
    ]
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


def _serve(
    cmd: list[str],
    env: dict[str, str],
    todo: queue.SimpleQueue[tuple[str, str]],
    details: list[ConditionResult],
    failures: list[str],
) -> None:
    """One worker process: feed it jobs from ``todo`` until none is left, collecting its
    reports into ``details`` (and why it failed into ``failures``). O(its jobs)."""
    # stderr goes to a file: a pipe nobody reads until the end could fill and block.
    with tempfile.TemporaryFile(mode="w+") as errors:
        proc = subprocess.Popen(
            cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, text=True
        )
        assert proc.stdin is not None and proc.stdout is not None
        try:
            while _feed_one(proc.stdin, proc.stdout, todo, details):
                pass
        finally:
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.close()
            code = proc.wait()
            errors.seek(0)
            if code != 0:
                failures.append(f"CrossHair worker failed ({code}):\n{errors.read()[-4000:]}")


def _feed_one(
    stdin: IO[str],
    stdout: IO[str],
    todo: queue.SimpleQueue[tuple[str, str]],
    details: list[ConditionResult],
) -> bool:
    """Send the worker the next job and read its report; False when there is none left or
    the worker died (its stderr says why). O(the job's conditions)."""
    try:
        policy, unit = todo.get_nowait()
    except queue.Empty:
        return False
    try:
        stdin.write(f"{policy} {unit}\n")
        stdin.flush()
    except BrokenPipeError:
        return False
    for line in stdout:
        if line.strip() == _END_OF_JOB:
            return True
        details.append(ConditionResult(**json.loads(line)))
    return False


# --------------------------------------------------------------------------
# The worker: runs inside the full build, one JSON line per condition.


def _worker(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__name__}")
    parser.add_argument("--paths", type=int, default=paths_for(PER_CONDITION_SECONDS))
    parser.add_argument("--per-path-timeout", type=float, default=PER_PATH_SECONDS)
    parser.add_argument(
        "--cap-seconds", type=float, default=None, help="CPU cap per condition (cap_seconds)"
    )
    parser.add_argument("--planted", action="store_true", help="jobs name planted bugs")
    parser.add_argument("--stop-at-first", action="store_true", help="one counterexample a job")
    parser.add_argument(
        "jobs", nargs="*", help="POLICY:UNIT jobs; without any, read 'POLICY UNIT' lines on stdin"
    )
    args = parser.parse_args(argv)

    from embedding_cache.verification import build

    if not build.FULL_SWEEP:  # without the sweep the check would be vacuous
        print("the CrossHair worker needs EMBEDDING_CACHE_CHECKED=full", file=sys.stderr)
        return 2
    from .crosshair_plugin import install

    install()
    lines: Iterator[str] = (
        (job.replace(":", " ", 1) for job in args.jobs) if args.jobs else iter(sys.stdin)
    )
    for line in lines:
        if not line.strip():
            continue
        policy, unit = line.split()
        if not _in_fresh_child(partial(_report_job, policy, unit, args)):
            return 1  # the child's traceback is on stderr
        print(_END_OF_JOB, flush=True)
    return 0


def _report_job(policy: str, unit: str, args: argparse.Namespace) -> None:
    """Check one job and print one JSON line per condition. O(conditions * paths)."""
    from crosshair.auditwall import engage_auditwall

    from .crosshair_plugin import check_job

    engage_auditwall()  # as `crosshair check` does: no side effects from analysed code
    results = check_job(
        policy, unit, args.paths, args.per_path_timeout, args.planted, args.stop_at_first,
        args.cap_seconds,
    )  # fmt: skip
    for result in results:
        print(json.dumps(asdict(result)), flush=True)


def _in_fresh_child(job: Callable[[], None]) -> bool:
    """Run ``job`` in a child forked from this worker and wait for it; True if it
    succeeded. O(1) besides the job (the fork copies pages only as they are written).

    CrossHair's search is seeded, but where it finds a counterexample also depends
    on what the same process analysed before (Z3's shared context and CrossHair's
    caches persist between analyses). Measured: s3fifo's S3FifoMainFirst caught at
    path 70, 100 or 211 depending on the jobs run before it in its worker, and at
    path 211 every time it ran first. Jobs go to whichever worker is free, so that
    history depends on timing; a child forked from the worker as ``install`` left
    it starts every job from the same state, whatever ran before and wherever.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: run the job, never return into the worker's loop
        code = 1
        try:
            job()
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


if __name__ == "__main__":
    sys.exit(_worker(sys.argv[1:]))
