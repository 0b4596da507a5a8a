"""The main job's ``planted`` step: every planted divergence of the catalogue
(``planted``), under every policy it applies to (the shared core's bugs under all, each
policy's order-rule bugs under it), caught by the replay, by trace validation and by
CrossHair (each link that must catch it: ``PlantedBug.caught_by``).

This module runs the links and records what each found; the links' own work is
``planted_replay`` (a bug replayed on its model's graph), ``planted_recording`` (traces
recorded with a bug in place), ``planted_validation`` (those traces checked by TLC) and
``crosshair_check``. Every run of a bug's code here (its replay; the recording of its
traces) is a unit of ``bounded.run_bounded``: a child process stopped past
``PLANTED_LIMITS``, whose link then fails with "planted bug NAME, step STEP: gave up
after S s / M MB" (a bug whose link gives up is not caught). TLC validates the
recorded traces in this process, with the real policy's spec: no code of the bug runs
outside a child. The CrossHair link (its workers are child processes) runs beside the
other two, from a thread; its findings are recorded after theirs, so a result's notes
keep one order.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TYPE_CHECKING

from .bounded import Limits, Unit, UnitOutcome, run_bounded
from .crosshair_check import CrosshairResult, planted_jobs, run_crosshair
from .graph_dump import DumpedModel, dump_state_graph
from .planted import for_policy
from .planted_recording import planted_recordings
from .planted_replay import planted_replay, replay_model
from .planted_validation import validate_planted
from .records import LINKS, PlantedResult

if TYPE_CHECKING:
    from .options import Job

#: How long and how much memory one bug's replay, or one bug's trace recording, may take.
#: A caught bug's replay stops early and grows the process little; a missed one replays
#: the whole graph, as the conformance step does, so the time limit leaves room for the
#: largest graph a planted bug is replayed on, on a loaded machine (docs/MEASURED.md,
#: "Planted bugs' replay limits"). A runaway is stopped at these limits, not at the
#: machine's memory.
PLANTED_LIMITS = Limits(seconds=900.0, megabytes=2048)

#: The results of one run of the step, by (policy, bug name).
Results = dict[tuple[str, str], PlantedResult]


def _record(outcome: PlantedResult, link: str, caught: bool, note: str) -> None:
    setattr(outcome, link, caught)
    outcome.notes.append(f"{link}: {note}")


def _settle_unit(job: Job, result: PlantedResult, link: str, done: UnitOutcome) -> bool:
    """Record a unit that gave up or raised as ``link``'s failure; True if it did either."""
    if done.gave_up:
        _record(result, link, False, done.message)
        job.progress(done.message)
        return True
    if done.error is not None:
        _record(result, link, False, f"error: {done.error}"[:300])
        return True
    return False


def _replay_link(job: Job, results: Results, limits: Limits) -> None:
    """Each policy's replay-link bugs replayed on its planted model's graph, each in a
    bounded child (``limits``), ``workers`` at a time."""
    options, report = job.options, job.report
    units: list[tuple[PlantedResult, Unit]] = []
    for policy in options.policies:
        dumps: dict[str, DumpedModel] = {}
        for bug in for_policy(policy, "replay"):
            try:
                model = replay_model(bug, options.plan(policy))
                dump = dumps.get(model) or job.dumped.get(policy, {}).get(model)
                dump = dumps[model] = dump or dump_state_graph(
                    options.tla_dir, model, options.workers
                )
            except Exception as exc:
                report.fail(policy, "planted", f"replay model: {type(exc).__name__}: {exc}")
                break
            unit = Unit(bug.name, f"replay [{policy}]", partial(planted_replay, bug, policy, dump))
            units.append((results[(policy, bug.name)], unit))
    outcomes = run_bounded([unit for _, unit in units], limits, options.workers)
    for (result, _), done in zip(units, outcomes, strict=True):
        report.add_seconds(result.policy, "planted_replay", done.seconds)
        if not _settle_unit(job, result, "replay", done):
            _record(result, "replay", *done.value)


def _traces_link(job: Job, results: Results, limits: Limits) -> None:
    """Every (bug, policy) trace validation must catch: the traces recorded in bounded
    children (``limits``), then validated by TLC in batches (``validate_planted``)."""
    options, report = job.options, job.report
    start = time.monotonic()
    pairs = [
        (results[(policy, bug.name)], bug, options.plan(policy))
        for policy in options.policies
        for bug in for_policy(policy, "traces")
    ]
    units = [
        Unit(bug.name, f"traces [{plan.policy}]", partial(planted_recordings, bug, plan))
        for _, bug, plan in pairs
    ]
    recorded = run_bounded(units, limits, options.workers)
    validated = [
        (result, (bug, plan, done.value))
        for (result, bug, plan), done in zip(pairs, recorded, strict=True)
        if not _settle_unit(job, result, "traces", done)
    ]
    verdicts = validate_planted([case for _, case in validated], options.tla_dir, options.workers)
    for (result, _), (caught, note) in zip(validated, verdicts, strict=True):
        _record(result, "traces", caught, note)
    for (result, *_), done in zip(pairs, recorded, strict=True):
        report.add_seconds(result.policy, "planted_traces_recording", done.seconds)
    report.seconds["planted_traces"] = time.monotonic() - start


def _crosshair_run(job: Job) -> CrosshairResult | None:
    """CrossHair on every planted bug of the chosen policies (its workers are child
    processes); None, with the failure reported, if it could not run."""
    options, report = job.options, job.report
    start = time.monotonic()
    try:
        crosshair = run_crosshair(
            planted_jobs(list(options.policies)), planted=True, jobs=options.workers
        )
    except Exception as exc:
        report.fail(None, "planted", f"CrossHair: {type(exc).__name__}: {exc}")
        return None
    report.seconds["planted_crosshair"] = time.monotonic() - start
    return crosshair


def _crosshair_link(results: Results, crosshair: CrosshairResult) -> None:
    """Record what CrossHair found for each planted bug."""
    gave_up = crosshair.gave_up()
    for (policy, name), found in crosshair.caught().items():
        outcome = results[(policy, name)]
        # Budgets are paths, so a miss is a miss on any machine; a job that hit its CPU
        # cap (the safety net) is inconclusive: it fails the link too, said as such.
        outcome.crosshair = found is not None
        if found is not None:
            outcome.notes.append(f"crosshair: {found.condition} ({found.check})")
        elif (policy, name) in gave_up:
            outcome.notes.append("crosshair: gave up (a condition hit its CPU cap; not a miss)")
        else:
            outcome.notes.append("crosshair: not caught")


def _settle(job: Job, results: Results) -> None:
    """Each result's blind and not-run links noted, its line printed, and it recorded."""
    for policy in job.options.policies:
        for bug in for_policy(policy):
            outcome = results[(policy, bug.name)]
            for link in LINKS:
                if not bug.caught_by(link):
                    outcome.notes.append(f"{link}: blind ({bug.why_blind})")
                elif outcome.link(link) is None:  # must catch it, and did not run
                    setattr(outcome, link, False)
                    outcome.notes.append(f"{link}: not run")
            marks = [
                f"{link} {'-' if hit is None else 'caught' if hit else 'MISSED'}"
                for link, hit in ((link, outcome.link(link)) for link in LINKS)
            ]
            job.progress(f"planted [{policy}] {bug.name}: {', '.join(marks)}")
            job.report.planted.append(outcome)


def run_planted(job: Job, limits: Limits = PLANTED_LIMITS) -> None:
    """Every planted bug of the chosen policies through each link that must catch it; the
    replay and the trace recording of each bug bounded by ``limits``."""
    results: Results = {}
    for policy in job.options.policies:
        for bug in for_policy(policy):
            results[(policy, bug.name)] = PlantedResult(bug.name, policy, bug.kind, bug.transition)
    # CrossHair's workers are child processes: they run beside the replay and the trace
    # recording (children too), so the step ends with the longer of the two, not their sum.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="planted-crosshair") as pool:
        crosshair = pool.submit(_crosshair_run, job)
        _replay_link(job, results, limits)
        _traces_link(job, results, limits)
        found = crosshair.result()
    if found is not None:
        _crosshair_link(results, found)
    _settle(job, results)
