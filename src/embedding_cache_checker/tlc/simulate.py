"""Random simulation with TLC (``-simulate``) at production-like sizes.

Exhaustive checking stops at a few keys and blocks; simulation walks random
behaviours of a much larger configuration (by default 16 keys, 64 blocks,
pin depth 4, behaviours of 200 steps) and checks every invariant and action
property of the config on every step (TLC 2.15's simulator checks both;
the views are irrelevant and dropped). What runs (the shape, the plan of
each model, the scaled config) is ``shapes``'s; this module runs it.

:func:`simulation_models` names the simulations: ``MCSim<Policy>`` from the
policy's main model, ``MCSim<BugModel>`` per (safety) bug model.
Non-vacuity: every bug model's defect must be found by simulation too
(:func:`simulate_bug_models`, which the nightly profile runs), some at a
smaller shape (their manifest entry's ``simulation``). The liveness bug models (tag
``liveness``) are not simulated: their properties rest on fairness over
infinite behaviours, which a finite random trace cannot exhibit, and their
configs name each key (``k1 = k1``, ``Need <- MCNeed``), so they do not scale.

Time bound: this TLC build prints its statistics only at the end (or each
minute), so a run killed at the deadline would report nothing. A run is
therefore a series of batches, each ``-simulate num=T -seed s`` (T traces,
seeds ``seed``, ``seed + 1``, ...), sized from the measured rate to end
before the deadline; traces and states are the sums over finished batches.
"""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import patterns
from .config import read_config
from .jar import locate_jar, locate_java
from .manifest import PASS, Model, main_models
from .output import TlcOutput, parse_output
from .process import LineSink, TlcCommand, TlcProcess, check_command
from .runner import judge
from .shapes import PRODUCTION as PRODUCTION  # re-exported: callers predate shapes.py
from .shapes import Shape, SimulationPlan, scale_config, simulation_plan

#: The result's ``mode`` in JSON.
MODE = "simulate"


def policy_bases(models: list[Model]) -> dict[str, str]:
    """Policy -> the name of its main model (``manifest.main_models``: tag ``main``),
    whose config (all invariants and properties, the ghost variables for the order
    property) is scaled up. O(models)."""
    return {policy: model.name for policy, model in main_models(models).items()}


@dataclass(frozen=True)
class SimulationModel:
    """A simulation: a name and the manifest model whose config it scales."""

    name: str
    base: Model

    @property
    def plan(self) -> SimulationPlan:
        """Its shape and depth (:func:`simulation_plan`)."""
        return simulation_plan(self.base)


def can_simulate(model: Model) -> bool:
    """False for a liveness model (tag ``liveness``): its properties need fairness
    over infinite behaviours, and its config names each key (module docstring)."""
    return "liveness" not in model.tags


def is_simulated_bug(model: Model) -> bool:
    """True for a bug model that simulation must catch: tag ``bug``, and simulable."""
    return "bug" in model.tags and can_simulate(model)


def simulation_models(models: list[Model]) -> list[SimulationModel]:
    """``MCSim<Policy>`` per policy with a main model, ``MCSim<Bug...>`` per
    safety bug model (:func:`is_simulated_bug`), in manifest order. O(models)."""
    sims = [
        SimulationModel(f"MCSim{policy.capitalize().replace('fifo', 'Fifo')}", main)
        for policy, main in main_models(models).items()
    ]
    sims += [SimulationModel(f"MCSim{m.name[2:]}", m) for m in models if is_simulated_bug(m)]
    return sims


def simulation_batch(
    spec: str,
    config: str,
    *,
    depth: int,
    seed: int,
    traces: int,
    metadir: Path,
    check_deadlock: bool = True,
) -> TlcCommand:
    """One simulation batch: ``traces`` behaviours of ``depth`` steps from ``seed``
    (run it inside the tla/ directory). O(1)."""
    return check_command(
        spec,
        config,
        workers=None,  # the simulator runs one thread
        metadir=metadir,
        check_deadlock=check_deadlock,
        mode=["-simulate", f"num={traces}", "-depth", str(depth), "-seed", str(seed), "-nowarning"],
    )


@dataclass
class SimulationResult:
    """A time-bounded simulation, judged against the base model's expectation."""

    name: str
    base: Model
    shape: Shape
    depth: int
    budget_seconds: float
    result: str  # "pass" (nothing found in the budget) or what was violated
    ok: bool  # result == the base model's expectation
    seconds: float
    traces: int  # behaviours completed (or reaching the violation)
    states: int  # states TLC checked (its "states checked")
    seeds: list[int] = field(default_factory=list)
    seconds_to_violation: float | None = None  # wall time until the violating batch ended
    output: TlcOutput | None = None  # of the last batch (the violating one, if any)
    raw_output: str = ""
    note: str = ""
    why_shape: str = ""  # why the shape is not the production shape (manifest)

    def to_json(self) -> dict[str, Any]:
        """The result as JSON, ``mode = "simulate"``."""
        out = self.output
        data: dict[str, Any] = {
            "name": self.name,
            "mode": MODE,
            "base_model": self.base.name,
            "policy": self.base.policy,
            "expect": self.base.expect,
            "result": self.result,
            "ok": self.ok,
            "traces": self.traces,
            "states": self.states,
            "depth": self.depth,
            "seeds": self.seeds,
            "seconds": round(self.seconds, 3),
            "budget_seconds": self.budget_seconds,
            "seconds_to_violation": (
                None if self.seconds_to_violation is None else round(self.seconds_to_violation, 3)
            ),
            "shape": {
                "keys": self.shape.keys,
                "blocks": self.shape.blocks,
                "max_pins": self.shape.max_pins,
                "level": self.shape.level,
            },
            "why_shape": self.why_shape,
            "note": self.note,
        }
        if out is not None and not self.ok:
            data["message"] = out.message
            data["counterexample"] = [
                {"state": s.number, "action": s.action, "changed": s.changed} for s in out.trace
            ]
        return data


def _count(pattern: re.Pattern[str], text: str) -> int:
    """The last number the pattern finds in text (0 if none)."""
    found = pattern.findall(text)
    return int(found[-1].replace(",", "")) if found else 0


@dataclass
class _Tally:
    """What the finished batches of one simulation found (sums and the last batch)."""

    traces: int = 0
    states: int = 0
    seeds: list[int] = field(default_factory=list)
    output: TlcOutput | None = None  # of the last finished batch
    raw: str = ""
    result: str = PASS
    note: str = ""
    to_violation: float | None = None

    def add(self, process: TlcProcess, batch: int, seed: int, result: str, start: float) -> bool:
        """Count one finished batch of ``batch`` traces judged ``result``; False when
        the simulation ends with it (a violation, or no verdict). O(output size)."""
        self.raw = process.text
        self.output = parse_output(self.raw)
        self.seeds.append(seed)
        if result not in (PASS, "incomplete"):
            self.result = result
            self.to_violation = time.monotonic() - start
            generated = _count(patterns.SIMULATION_GENERATED, self.raw)
            self.states += max(_count(patterns.SIMULATION_PROGRESS, self.raw), generated)
            self.traces += 1  # the violating behaviour (earlier ones are not printed)
            return False
        if result == "incomplete":
            self.result = "incomplete"
            self.note = "TLC stopped without a verdict: " + "\n".join(process.lines[-5:])
            return False
        self.traces += batch
        self.states += _count(patterns.SIMULATION_PROGRESS, self.raw)
        return True


@dataclass(frozen=True)
class _Run:
    """One simulation's fixed inputs: the base model, where its scaled config is,
    the behaviour length, the time budget, and how TLC is started."""

    base: Model
    tla_dir: Path
    config: Path  # the scaled config
    tmp: Path  # a fresh directory: one metadir (and tmpdir) per batch below it
    depth: int
    seconds: float
    seed: int
    java: Path
    jar: Path
    label: str
    on_line: LineSink | None
    properties: tuple[str, ...]  # the config's PROPERTIES, for judging

    def batch(self, index: int, seed: int, traces: int) -> TlcProcess:
        """Start batch ``index`` (from 1): ``traces`` behaviours from ``seed``. O(1)."""
        command = simulation_batch(
            self.base.spec,
            str(self.config),
            depth=self.depth,
            seed=seed,
            traces=traces,
            metadir=self.tmp / f"meta{index}",
            check_deadlock=self.base.check_deadlock,
        )
        return TlcProcess(
            self.java, self.jar, command, self.tla_dir, label=self.label, on_line=self.on_line
        )

    def judge(self, process: TlcProcess) -> str:
        """A finished batch's result: what TLC reported violated, ``pass``, or
        ``incomplete``. O(output size)."""
        raw = process.text
        result = judge(self.base, parse_output(raw), list(self.properties))
        if (
            result == "incomplete"
            and patterns.FINISHED.search(raw)
            and process.proc.returncode == 0
        ):
            return PASS  # a clean batch ends without a verdict line
        return result

    def batches(self, first_batch: int, start: float) -> _Tally:
        """Run batches until a violation, no verdict, or the deadline; the first has
        ``first_batch`` traces, each next one 80 % of the remaining time at the rate
        measured so far. A batch still running at the deadline is killed and not
        counted. O(the budget)."""
        tally = _Tally()
        traces, index = first_batch, 0
        while (remaining := self.seconds - (time.monotonic() - start)) > 0:
            index += 1
            batch_start = time.monotonic()
            process = self.batch(index, self.seed + index - 1, traces)
            finished = process.wait(remaining)
            process.stop()
            if not finished:
                tally.note = f"a batch of {traces} traces was stopped at the deadline (not counted)"
                break
            if not tally.add(process, traces, self.seed + index - 1, self.judge(process), start):
                break
            per_trace = (time.monotonic() - batch_start) / traces
            left = self.seconds - (time.monotonic() - start)
            traces = max(1, int(0.8 * left / per_trace)) if per_trace > 0 else traces * 2
        return tally


def run_simulation(
    base: Model,
    tla_dir: Path,
    *,
    name: str | None = None,
    depth: int | None = None,
    seconds: float = 60.0,
    seed: int = 1,
    shape: Shape | None = None,
    first_batch: int = 2,
    java: Path | None = None,
    jar: Path | None = None,
    on_line: LineSink | None = None,
) -> SimulationResult:
    """Simulate ``base``'s config scaled to ``shape`` for about ``seconds``.

    ``shape`` and ``depth`` default to the model's plan (``shapes.simulation_plan``:
    the production shape and 200 steps, but for a model whose manifest entry sets
    ``simulation``). Batches of ``-simulate num=T`` run until a violation or
    the deadline (:meth:`_Run.batches`). The result is judged like a model run:
    ``pass`` if nothing was violated, else what TLC named; ``ok`` if that is the
    base model's expectation, and for a pass only if some behaviour finished.
    O(the budget).
    """
    plan = simulation_plan(base)
    shape = plan.shape if shape is None else shape
    depth = plan.depth if depth is None else depth
    if depth < 1 or seconds <= 0 or first_batch < 1:
        raise ValueError("depth, seconds and first_batch must be positive")
    label = name or f"MCSim{base.name[2:]}"
    scaled = scale_config((tla_dir / base.config).read_text(encoding="utf-8"), shape, base.policy)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"tlc-sim-{label}-") as tmp:
        config = Path(tmp) / f"{label}.cfg"
        config.write_text(scaled, encoding="utf-8")
        run = _Run(
            base,
            tla_dir,
            config,
            Path(tmp),
            depth,
            seconds,
            seed,
            locate_java() if java is None else java,
            locate_jar() if jar is None else jar,
            label,
            on_line,
            tuple(read_config(tla_dir / base.config).properties),
        )
        tally = run.batches(first_batch, start)
    return _judged(run, tally, shape, plan, time.monotonic() - start)


def _judged(
    run: _Run, tally: _Tally, shape: Shape, plan: SimulationPlan, seconds: float
) -> SimulationResult:
    """The simulation's result from its batches' tally. O(1)."""
    ok, note = tally.result == run.base.expect, tally.note
    if ok and tally.result == PASS and tally.traces == 0:
        # A budget spent before one behaviour finished checked nothing: not a pass.
        ok, note = False, "no behaviour finished within the budget; raise --seconds"
    if not ok and not note:
        note = f"expected {run.base.expect}, got {tally.result}"
    return SimulationResult(
        name=run.label,
        base=run.base,
        shape=shape,
        depth=run.depth,
        budget_seconds=run.seconds,
        result=tally.result,
        ok=ok,
        seconds=seconds,
        traces=tally.traces,
        states=tally.states,
        seeds=tally.seeds,
        seconds_to_violation=tally.to_violation,
        output=tally.output,
        raw_output=tally.raw,
        note=note,
        why_shape=plan.why if shape == plan.shape else "",
    )


def simulate_bug_models(
    models: list[Model],
    tla_dir: Path,
    *,
    seconds: float = 60.0,
    seed: int = 1,
    names: list[str] | None = None,
    java: Path | None = None,
    jar: Path | None = None,
    on_line: LineSink | None = None,
    on_result: Callable[[SimulationResult], None] | None = None,
) -> list[SimulationResult]:
    """Simulate every (safety) bug model of ``models`` and report whether each
    defect was found: the non-vacuity sweep of the simulation layer.

    Each bug model (:func:`is_simulated_bug`; only ``names`` if given) runs
    with its plan (:func:`simulation_plan`) for at most ``seconds``, stopping
    at its first violation; a result is ``ok`` iff TLC reported the model's
    expected invariant or property. ``on_result`` is called after each model
    (for progress). Serial: one TLC process at a time. O(bug models x seconds),
    ``seconds`` at most per model (what one takes: docs/MEASURED.md,
    "embedding-cache verify --profile nightly").
    """
    wanted = None if names is None else set(names)
    results: list[SimulationResult] = []
    for sim in simulation_models(models):
        if not is_simulated_bug(sim.base) or (wanted is not None and sim.base.name not in wanted):
            continue
        result = run_simulation(
            sim.base,
            tla_dir,
            name=sim.name,
            seconds=seconds,
            seed=seed,
            java=java,
            jar=jar,
            on_line=on_line,
        )
        if on_result is not None:
            on_result(result)
        results.append(result)
    return results
