"""The main job: every check that ties the cache to its specification, per eviction policy.

Steps, each with progress on stderr:

1. ``tlc``         -- every model of tla/models.json of the chosen policies and of
                      the shared core (``policy`` null) meets its expectation;
2. ``conformance`` -- per policy, every edge of its replay models' state graphs
                      replayed on the code running that policy (its plan,
                      ``plans.plan_for``, from tla/models.json: some in full,
                      deep constants up to a depth);
3. ``traces``      -- per policy, traces recorded from the code (sequential
                      with misuse, and threaded) accepted by TLC against that
                      policy's trace spec;
4. ``crosshair``   -- per policy, no counterexample to any transition's contract
                      over states holding that policy;
5. ``planted``     -- every planted divergence of the catalogue (``planted``),
                      under every policy it applies to (the shared core's bugs
                      under all, each policy's order-rule bugs under it), caught
                      by the replay, by trace validation and by CrossHair (each
                      link that must catch it: ``PlantedBug.caught_by``);
6. ``linearizability`` -- per policy, concurrent histories of the real cache
                      linearizable, and every non-linearizable mutant (``lin``)
                      caught.

How hard each step checks is the run's ``profile`` (``profile.Profile``: ``ci``
or ``nightly``). The nightly profile also runs (``extra_steps``):

7. ``stateful``    -- the Hypothesis state machines under a heavier settings profile;
8. ``simulate``    -- TLC simulation at production shape of every policy (and the
                      bug models);
9. ``distributed`` -- the manifest's big models (``default_run`` false) on
                      distributed TLC with local workers.

The steps are named once, in ``step_names``; each has its runner in
``step_table.STEP_TABLE`` (in ``step_models``, ``step_traces``, ``step_checks``,
``step_planted`` and ``step_nightly``) and its verdict in ``verdicts``; the report is
``report`` and its JSON ``report_json``; what to run is ``options``. This module runs
them.

The CI steps run in two lanes beside each other (``LANES``): conformance, planted
and linearizability (mostly the replay, in forked children) in one; tlc, traces and
crosshair (mostly TLC's and CrossHair's child processes) in the other. The planted
step reads the graphs conformance dumped, so the two are in one lane, in order. The
nightly extra steps run after both lanes, alone. ``--sequential`` runs every step
alone, in ``STEPS`` order.

The JSON report keeps one top-level summary of all policies (``tlc``,
``conformance``, ``trace_validation``, ``crosshair``, ``planted``,
``linearizability``) and adds ``policies``: the same sections for each policy,
plus the extra steps' sections, ``steps`` (each step's verdict and seconds)
and ``profile`` (its settings).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from .options import Job, VerifyOptions
from .records import LINKS, PlantedResult, Progress, ReplayRun, TraceRun, stderr_progress
from .report import VerifyReport
from .step_names import CI_STEPS, EXTRA_STEPS, STEPS
from .step_table import STEP_BY_NAME, Step

__all__ = [
    "CI_STEPS",
    "EXTRA_STEPS",
    "LINKS",
    "STEPS",
    "PlantedResult",
    "ReplayRun",
    "TraceRun",
    "VerifyOptions",
    "VerifyReport",
    "run_verify",
]


def _run_per_policy(step: Step, job: Job) -> None:
    """Run ``step`` for each chosen policy; a crash fails that policy and the others go on."""
    assert step.run_per_policy is not None
    report = job.report
    for policy in job.options.policies:
        begin = time.monotonic()
        try:
            step.run_per_policy(job, policy)
        except Exception as exc:
            report.fail(policy, step.name, f"{type(exc).__name__}: {exc}")
            job.progress(f"{step.name} [{policy}] failed: {type(exc).__name__}: {exc}")
        report.add_seconds(policy, step.name, time.monotonic() - begin)


#: The steps that run beside each other, in two lanes, each lane's in order: the
#: replay's (in this process; the planted step reads conformance's dumped graphs) and
#: the child processes' (TLC, CrossHair). On 2 cores they overlap.
LANES: tuple[tuple[str, ...], ...] = (
    ("conformance", "planted", "linearizability"),
    ("tlc", "traces", "crosshair"),
)


def _run_step(name: str, job: Job) -> None:
    """Run one step; a crash is reported, and the run goes on. O(the step)."""
    step = STEP_BY_NAME[name]
    job.progress(f"--- {name}")
    start = time.monotonic()
    try:
        if step.run_once is not None:
            step.run_once(job)
        else:
            _run_per_policy(step, job)
    except Exception as exc:  # report and go on: one broken link must not hide the others
        job.report.fail(None, name, f"{type(exc).__name__}: {exc}")
        job.progress(f"{name} failed: {type(exc).__name__}: {exc}")
    job.report.seconds[name] = time.monotonic() - start


def _run_lane(names: tuple[str, ...], job: Job) -> None:
    for name in names:
        _run_step(name, job)


def run_verify(options: VerifyOptions, progress: Progress = stderr_progress) -> VerifyReport:
    """Run the selected steps, the lanes' beside each other (``options.lanes``), then the
    rest; a step that crashes is reported, and the rest still run.

    Steps that run per policy report a crash for that policy and go on with the others.
    ``seconds["total"]`` is the run's wall time. O(the selected steps).
    """
    report = VerifyReport(policies=options.policies, profile=options.profile)
    job = Job(options, report, progress)
    selected = options.selected_steps
    begin = time.monotonic()
    lanes = [tuple(s for s in lane if s in selected) for lane in LANES] if options.lanes else []
    lanes = [lane for lane in lanes if lane]
    if len(lanes) > 1:
        with ThreadPoolExecutor(max_workers=len(lanes), thread_name_prefix="verify") as pool:
            for done in [pool.submit(_run_lane, lane, job) for lane in lanes]:
                done.result()
    laned = {s for lane in lanes for s in lane} if len(lanes) > 1 else set()
    for name in selected:
        if name not in laned:
            _run_step(name, job)
    report.seconds["total"] = time.monotonic() - begin
    return report
