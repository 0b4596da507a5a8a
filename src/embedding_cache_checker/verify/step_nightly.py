"""The steps a profile may add (``Profile.extra_steps``): ``stateful`` (the Hypothesis
state machines under a heavier settings profile), ``simulate`` (TLC simulation at
production shape of every policy, and the bug models) and ``distributed`` (the
manifest's big models on distributed TLC with local workers)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..tlc.distributed import DistributedError
from ..tlc.jar import locate_jar, locate_java
from ..tlc.manifest import load_manifest
from .pytest_run import STATEFUL_TESTS, run_pytest
from .tlc_steps import (
    big_models,
    policy_simulations,
    run_big_model,
    run_bug_simulations,
    run_simulations,
)

if TYPE_CHECKING:
    from .options import Job

#: Seconds the stateful tests may take under the profile's settings.
STATEFUL_TIMEOUT = 3600.0


def run_stateful(job: Job) -> None:
    """The Hypothesis state machines under the profile's settings profile (one pytest)."""
    options = job.options
    hypothesis_profile = options.profile.hypothesis_profile or "ci"
    run = run_pytest(
        STATEFUL_TESTS, options.project_root, hypothesis_profile, timeout=STATEFUL_TIMEOUT
    )
    job.report.stateful = run
    job.progress(
        f"stateful ({hypothesis_profile}): {run.passed} passed, {run.failed} failed, "
        f"{run.errors} errors in {run.seconds:.1f} s: {'ok' if run.ok else 'FAILED'}"
    )


def run_simulate(job: Job) -> None:
    """Each policy's main model at production shape; then the bug models, if asked.
    O(the profile's simulation seconds per model)."""
    options, report = job.options, job.report
    profile = options.profile
    models = load_manifest(options.tla_dir)
    java, jar = locate_java(), locate_jar()
    report.simulations += run_simulations(
        policy_simulations(models, options.policies),
        options.tla_dir,
        profile.simulate_seconds,
        job.progress,
        java=java,
        jar=jar,
    )
    if profile.simulate_bugs:
        report.simulations += run_bug_simulations(
            models,
            options.tla_dir,
            options.policies,
            profile.simulate_bug_seconds,
            job.progress,
            java=java,
            jar=jar,
        )


def run_distributed_step(job: Job) -> None:
    """The big models (none is fine), each on distributed TLC with the profile's workers."""
    options, progress = job.options, job.progress
    workers = options.profile.distributed_workers
    models = [
        m
        for m in big_models(load_manifest(options.tla_dir))
        if m.policy is None or m.policy in options.policies
    ]
    if not models:
        progress("distributed: the manifest has no big model (default_run false)")
        return
    java, jar = locate_java(), locate_jar()
    for model in models:
        try:
            run = run_big_model(
                model, options.tla_dir, workers, threads=options.workers, java=java, jar=jar
            )
        except DistributedError as exc:
            job.report.fail(model.policy, "distributed", f"{model.name}: {exc}")
            progress(f"distributed {model.name} failed: {exc}")
            continue
        result = run.result
        verdict = "ok" if result.ok else f"FAILED ({result.note})"
        progress(
            f"distributed {model.name} ({run.mode}, {run.workers} workers): {result.result}, "
            f"{result.output.distinct_states or 0:,} states in {result.seconds:.1f} s: {verdict}"
        )
        job.report.big_models.append(run)
