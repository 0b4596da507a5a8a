"""Run CrossHair over the transitions' icontract contracts and report what it found.

``run_crosshair`` starts worker processes (``python -m`` this module) with
``EMBEDDING_CACHE_CHECKED=full``: in that build every transition carries its
own postconditions plus every named invariant as a precondition and a
postcondition, so CrossHair checks the inductive step -- from any state
satisfying every invariant, the transition preserves them all and meets its
own postconditions. The workers use CrossHair's Python API as
``crosshair check --analysis_kind=icontract`` does, one named condition at a
time with a CPU-time budget each, after ``crosshair_plugin.install()`` has
taught CrossHair to build non-empty states and to accept documented raises.
Each worker prints one JSON line per condition; the parent merges them into a
``CrosshairResult``.

``planted=True`` runs the deliberately broken copies in ``planted`` instead:
each must yield a counterexample (caught / planted). There the conditions the
bug is expected to break run first and a target stops at its first
counterexample, since one suffices to catch it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

#: The transitions CrossHair checks (every function in ``transitions`` with a contract).
CLEAN_TARGETS: tuple[str, ...] = tuple(
    f"embedding_cache.transitions.{name}"
    for name in ("alloc", "pin_if_ready", "unpin", "pin", "mark_ready", "discard")
)
#: CPU seconds per condition for the clean check: 56 conditions on 2 workers, about 2.5 min
#: of CPU each. Every planted bug was found in at most 4 CPU s on the condition it breaks.
PER_CONDITION_SECONDS = 5.0
#: CPU seconds per condition for planted bugs: a miss costs the whole budget, so be generous
#: (each run stops at its first counterexample; all ten take about 10 CPU s in total).
PLANTED_SECONDS = 20.0
#: CPU seconds per execution path; no path of a transition over a small state needs more.
PER_PATH_SECONDS = 2.0
#: Worker processes (the CI machine has 2 cores).
DEFAULT_JOBS = 2

Outcome = Literal["counterexample", "confirmed", "unrefuted", "vacuous", "error"]


@dataclass(frozen=True)
class ConditionResult:
    """What CrossHair said about one condition of one target."""

    target: str  # dotted name of the checked function
    condition: str  # the condition's name (spec/NAMES.md): its icontract description
    check: str  # the condition function's own name, e.g. "mark_ready_counts_blocks"
    outcome: Outcome  # confirmed: all paths exhausted; unrefuted: budget spent, none found
    paths: int  # execution paths CrossHair completed
    seconds: float  # CPU seconds spent
    message: str  # the counterexample or error, as CrossHair words it ("" otherwise)


@dataclass(frozen=True)
class CrosshairResult:
    """The merged report of one CrossHair run."""

    functions: int  # targets checked
    conditions: int  # conditions checked (one analysis each)
    counterexamples: int  # conditions with a counterexample
    details: tuple[ConditionResult, ...]
    seconds: float  # wall-clock seconds of the whole run

    @property
    def ok(self) -> bool:
        """True when nothing was refuted, nothing was vacuous and nothing errored."""
        return all(d.outcome in ("confirmed", "unrefuted") for d in self.details)

    def caught(self) -> dict[str, ConditionResult | None]:
        """Per target, its first counterexample (None when none was found)."""
        first: dict[str, ConditionResult | None] = {}
        for d in self.details:
            first.setdefault(d.target, None)
            if d.outcome == "counterexample" and first[d.target] is None:
                first[d.target] = d
        return first

    def summary(self) -> list[str]:
        """One line per target: conditions, counterexamples, paths and CPU seconds."""
        lines = []
        for target in dict.fromkeys(d.target for d in self.details):
            mine = [d for d in self.details if d.target == target]
            found = [d for d in mine if d.outcome == "counterexample"]
            first = f"  first: {found[0].condition} ({found[0].check})" if found else ""
            lines.append(
                f"{target.rsplit('.', 1)[1]:30} {len(mine):3} conditions "
                f"{len(found):3} counterexamples {sum(d.paths for d in mine):6} paths "
                f"{sum(d.seconds for d in mine):6.1f} cpu-s{first}"
            )
        return lines

    def to_json(self) -> dict[str, Any]:
        """A plain-dict form for ``--json`` reports."""
        return {**asdict(self), "ok": self.ok}


def run_crosshair(
    targets: Sequence[str] = CLEAN_TARGETS,
    timeout: float | None = None,
    per_path_timeout: float = PER_PATH_SECONDS,
    jobs: int = DEFAULT_JOBS,
    planted: bool = False,
    stop_at_first: bool | None = None,
) -> CrosshairResult:
    """Check ``targets`` with CrossHair in worker processes; merge their reports.

    ``timeout`` is the CPU-time budget per condition (CrossHair's
    ``--per_condition_timeout``; default ``PER_CONDITION_SECONDS``, or
    ``PLANTED_SECONDS`` with ``planted``). With ``planted`` the targets are taken as
    ``planted.PLANTED`` names (default: all of them), the conditions each
    bug is expected to break run first, and (unless ``stop_at_first`` is
    False) a target stops at its first counterexample. Runs for up to about
    conditions * timeout / jobs seconds.
    """
    if stop_at_first is None:
        stop_at_first = planted
    if timeout is None:
        timeout = PLANTED_SECONDS if planted else PER_CONDITION_SECONDS
    if planted and targets is CLEAN_TARGETS:
        from .planted import PLANTED

        targets = tuple(bug.target for bug in PLANTED)
    start = time.monotonic()
    env = {**os.environ, "EMBEDDING_CACHE_CHECKED": "full"}
    # Round-robin: the targets are listed heaviest first, so the workers balance.
    shares = [list(targets[i :: max(1, jobs)]) for i in range(max(1, jobs))]
    procs = []
    for share in filter(None, shares):
        cmd = [sys.executable, "-m", __name__, "--timeout", str(timeout)]
        cmd += ["--per-path-timeout", str(per_path_timeout)]
        cmd += [
            *(["--planted"] if planted else []),
            *(["--stop-at-first"] if stop_at_first else []),
        ]
        procs.append(
            subprocess.Popen(
                [*cmd, *share], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
        )
    details: list[ConditionResult] = []
    for proc in procs:
        out, err = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"CrossHair worker failed ({proc.returncode}):\n{err[-4000:]}")
        details += [ConditionResult(**json.loads(line)) for line in out.splitlines() if line]
    order = {t: i for i, t in enumerate(targets)}
    details.sort(key=lambda d: order[d.target])
    return CrosshairResult(
        functions=len({d.target for d in details}),
        conditions=len(details),
        counterexamples=sum(d.outcome == "counterexample" for d in details),
        details=tuple(details),
        seconds=time.monotonic() - start,
    )


# --------------------------------------------------------------------------
# The worker: runs inside the full build, one JSON line per condition.


def _check_target(
    target: str, timeout: float, per_path_timeout: float, planted: bool, stop_at_first: bool
) -> Iterator[ConditionResult]:
    """Analyse each postcondition of ``target`` (preconditions assumed), in order."""
    from time import process_time

    from crosshair.condition_parser import condition_parser
    from crosshair.core import ConditionCheckable, analyze_calltree
    from crosshair.core_and_libs import analyze_function
    from crosshair.fnutil import load_by_qualname
    from crosshair.options import AnalysisKind, AnalysisOptionSet
    from crosshair.statespace import MessageType, VerificationStatus

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
    named = [(_condition_names(c), c) for c in checkables]
    if planted:
        from .planted import PLANTED

        expect = next(bug.expect for bug in PLANTED if bug.target == target)
        named.sort(key=lambda nc: nc[0][0] not in expect)  # stable: expected ones first
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


def _condition_names(checkable: Any) -> tuple[str, str]:
    """(description, function name) of the icontract condition a checkable analyses."""
    # CrossHair's icontract parser evaluates each postcondition through
    # functools.partial(post_eval, <icontract Contract>, ...).
    evaluate = checkable.conditions.post[0].evaluate
    for arg in getattr(evaluate, "args", ()):
        condition = getattr(arg, "condition", None)
        if condition is not None:
            name = getattr(condition, "__name__", "<lambda>")
            return (str(getattr(arg, "description", None) or name), name)
    return ("<unnamed>", "<unknown>")


def _worker(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__name__}")
    parser.add_argument("--timeout", type=float, default=PER_CONDITION_SECONDS)
    parser.add_argument("--per-path-timeout", type=float, default=PER_PATH_SECONDS)
    parser.add_argument("--planted", action="store_true", help="targets are planted bugs")
    parser.add_argument("--stop-at-first", action="store_true", help="one counterexample a target")
    parser.add_argument("targets", nargs="+")
    args = parser.parse_args(argv)

    from .. import build

    if not build.FULL_SWEEP:  # without the sweep the check would be vacuous
        print("the CrossHair worker needs EMBEDDING_CACHE_CHECKED=full", file=sys.stderr)
        return 2
    from crosshair.auditwall import engage_auditwall

    from .crosshair_plugin import install

    install()
    engage_auditwall()  # as `crosshair check` does: no side effects from analysed code
    for target in args.targets:
        results = _check_target(
            target, args.timeout, args.per_path_timeout, args.planted, args.stop_at_first
        )
        for result in results:
            print(json.dumps(asdict(result)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_worker(sys.argv[1:]))
