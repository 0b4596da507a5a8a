"""The nightly profile's TLC steps: simulation at production shape, and the big models.

Both reuse the ``tlc`` package's public runners (``simulate.run_simulation``,
``distributed.run_distributed``, ``runner.run_model``); this module only chooses
what to run and records it in one shape the main job's report reads.

* simulation: each policy's main model (``simulate.policy_bases``: tag ``main``) scaled to
  production shape, and, when asked, every simulated bug model
  (``simulate.simulate_bug_models``) of the core or of a chosen policy (the
  bug must be found: ``ok`` is the base model's expectation).
* ``big_models``: the manifest's models with ``default_run`` false (not the
  inductive ones), on distributed TLC with local workers. Distributed TLC 2.15
  checks no PROPERTIES, so a big model whose expectation is a property runs in
  one process instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..tlc import simulate
from ..tlc.config import read_config
from ..tlc.distributed import DEFAULT_PORT, run_distributed
from ..tlc.inductive import INDUCTIVE_TAG
from ..tlc.jar import locate_jar, locate_java
from ..tlc.manifest import Model
from ..tlc.report import result_json
from ..tlc.runner import ModelResult, run_model
from ..tlc.simulate import SimulationModel, SimulationResult, run_simulation
from .records import Progress


def policy_simulations(models: list[Model], policies: Iterable[str]) -> list[SimulationModel]:
    """The simulation of each policy's main model, for the chosen policies. O(models)."""
    chosen = set(policies)
    main = simulate.policy_bases(models)
    bases = {main[p] for p in chosen if p in main}
    return [s for s in simulate.simulation_models(models) if s.base.name in bases]


def bug_model_names(models: list[Model], policies: Iterable[str]) -> list[str]:
    """The simulated bug models (``simulate.is_simulated_bug``) of the core or of a chosen
    policy. O(models)."""
    chosen = set(policies)
    return [
        m.name
        for m in models
        if simulate.is_simulated_bug(m) and (m.policy is None or m.policy in chosen)
    ]


def _said(result: SimulationResult, progress: Progress) -> None:
    verdict = "ok" if result.ok else f"FAILED ({result.note})"
    progress(
        f"simulate {result.name}: {result.result}, {result.traces:,} traces, "
        f"{result.states:,} states in {result.seconds:.1f} s: {verdict}"
    )


def run_simulations(
    sims: list[SimulationModel],
    tla_dir: Path,
    seconds: float,
    progress: Progress,
    *,
    java: Path | None = None,
    jar: Path | None = None,
) -> list[SimulationResult]:
    """Simulate each of ``sims`` for about ``seconds``. O(len(sims) x seconds)."""
    results = []
    for sim in sims:
        result = run_simulation(
            sim.base, tla_dir, name=sim.name, seconds=seconds, java=java, jar=jar
        )
        _said(result, progress)
        results.append(result)
    return results


def run_bug_simulations(
    models: list[Model],
    tla_dir: Path,
    policies: Iterable[str],
    seconds: float,
    progress: Progress,
    *,
    java: Path | None = None,
    jar: Path | None = None,
) -> list[SimulationResult]:
    """Simulate the bug models of the core and of ``policies``, each until its violation
    or ``seconds`` (``simulate.simulate_bug_models``). O(bug models x seconds)."""
    return simulate.simulate_bug_models(
        models,
        tla_dir,
        seconds=seconds,
        names=bug_model_names(models, policies),
        java=java,
        jar=jar,
        on_result=lambda result: _said(result, progress),
    )


@dataclass
class BigModelRun:
    """One big model's check: its judged result and how it ran."""

    result: ModelResult
    mode: str  # "distributed", or "single" (its expectation is a property)
    workers: int  # distributed workers (0 in one process)
    unchecked_properties: list[str] = field(default_factory=list)

    @property
    def policy(self) -> str | None:
        """The model's eviction policy (None: the core)."""
        return self.result.model.policy

    def to_json(self) -> dict[str, Any]:
        """The result as ``tlc.report.result_json`` gives it, with how it ran."""
        return {
            **result_json(self.result),
            "mode": self.mode,
            "workers": self.workers,
            "unchecked_properties": self.unchecked_properties,
        }


def big_models(models: list[Model]) -> list[Model]:
    """The models too big for the default run (``default_run`` false), in order; not the
    inductive models, outside it too but small (the tlc step runs them). O(models)."""
    return [m for m in models if not m.default_run and INDUCTIVE_TAG not in m.tags]


def run_big_model(
    model: Model,
    tla_dir: Path,
    workers: int,
    *,
    threads: int = 2,
    port: int = DEFAULT_PORT,
    java: Path | None = None,
    jar: Path | None = None,
) -> BigModelRun:
    """Check ``model`` with distributed TLC and ``workers`` local workers, or in one
    process with ``threads`` TLC workers when its expectation is a property
    (distributed TLC 2.15 would not check it). O(TLC's run).

    Raises:
        DistributedError: the server or the workers could not run (e.g. port in use).
    """
    if model.expect in read_config(tla_dir / model.config).properties:
        java = locate_java() if java is None else java
        jar = locate_jar() if jar is None else jar
        result = run_model(model, tla_dir, java, jar, threads)
        return BigModelRun(result, "single", 0)
    run = run_distributed(model, tla_dir, workers=workers, port=port, java=java, jar=jar)
    return BigModelRun(run.result, "distributed", workers, run.unchecked_properties)
