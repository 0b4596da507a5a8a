"""Random simulation with TLC (``-simulate``) at production-like sizes.

Exhaustive checking stops at a few keys and blocks; simulation walks random
behaviours of a much larger configuration (by default 16 keys, 64 blocks,
pin depth 4, behaviours of 200 steps) and checks every invariant and action
property of the config on every step (TLC 2.15's simulator checks both;
the views are irrelevant and dropped).

The simulation configs are *derived*, not copied: :func:`scale_config`
rewrites a manifest model's config (its constants ``Keys``, ``N``,
``MaxPins``, ``Level``, the s3fifo sizes; its ``VIEW``/``SYMMETRY`` dropped),
so each bug model's defect (its ``Op <- BuggyOp`` override) and each
policy's full check list carry over unchanged and cannot drift.
:func:`simulation_models` names them: ``MCSim<Policy>`` from the policy's
main model, ``MCSim<BugModel>`` per (safety) bug model.

Non-vacuity: every bug model's defect must be found by simulation too
(:func:`simulate_bug_models`, which the nightly profile runs). TLC 2.15's
simulator computes *all* successors of a state and picks one uniformly, so
at production shape almost every step is an alloc: each absent key has
65 sizes (alloc or failed alloc), a live key a handful of other actions
(a production-shape MCSimBugEvictPinned counterexample of 147 steps had
141 allocs, 128 of them failed). A defect that needs a pin sequence,
several ready entries or a quiescent cache is then (almost) never
reached. Those bug models are simulated at a smaller shape
(:data:`BUG_PLANS`, each with its reason; the measurements are in
tla/README.md, "Simulation"); the policies' main models and the other bug
models keep the production shape.
The liveness bug models (tag ``liveness``) are not simulated: their
properties rest on fairness over infinite behaviours, which a finite
random trace cannot exhibit, and their configs name each key (``k1 = k1``,
``Need <- MCNeed``), so they do not scale.

Why the counts level: at block level each ``Alloc`` step enumerates every
block set ``S \\in SUBSET Blocks`` (2^64 at 64 blocks), and the simulator
computes all successors of a state before picking one. At counts level an
alloc has no block choice (``BlockChoices = {{}}``): a step costs the
16 x 65 alloc arguments and the eviction loop. What the counts level cannot
express (which block ids) is checked exhaustively at block level.

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
from .manifest import PASS, Model
from .output import TlcOutput, parse_output
from .process import LineSink, TlcCommand, TlcProcess, check_command, command_line
from .runner import judge

#: The result's ``mode`` in JSON.
MODE = "simulate"

#: The main model of each policy, whose config (all invariants and
#: properties, the ghost variables for the order property) is scaled up.
POLICY_BASES = {"fifo": "MCDeep", "gdsf": "MCGdsf", "s3fifo": "MCS3Fifo"}

_CONSTANT = re.compile(r"^(?P<indent>\s*)(?P<name>\w+)\s*=\s*(?P<value>.+?)\s*$")


@dataclass(frozen=True)
class Shape:
    """The sizes a simulation config gets."""

    keys: int = 16
    blocks: int = 64
    max_pins: int = 4
    level: str = "counts"

    def constants(self) -> dict[str, str]:
        """The TLA+ text of each scaled constant (s3fifo's sizes as in every model:
        SmallTarget = Max(1, N div 10), GhostCapacity = N - SmallTarget)."""
        small = max(1, self.blocks // 10)
        return {
            "Keys": "{" + ", ".join(f"k{i}" for i in range(1, self.keys + 1)) + "}",
            "N": str(self.blocks),
            "MaxPins": str(self.max_pins),
            "Level": f'"{self.level}"',
            "SmallTarget": str(small),
            "GhostCapacity": str(self.blocks - small),
        }


#: Near production shape (the issue's example).
PRODUCTION = Shape()

#: The behaviour length of every simulation unless asked otherwise.
DEFAULT_DEPTH = 200


@dataclass(frozen=True)
class SimulationPlan:
    """How a model is simulated: its shape, behaviour length, and why, when
    that is not the production shape."""

    shape: Shape = PRODUCTION
    depth: int = DEFAULT_DEPTH
    why: str = ""


#: Half the production shape's keys, a quarter of its blocks: an absent key
#: has 17 alloc sizes instead of 65, so a state has ~8 x 17 alloc successors
#: instead of ~16 x 65, and pins, unpins and mark_ready are no longer lost
#: among them.
SMALL = Shape(keys=8, blocks=16)

#: Four keys, eight blocks: few enough live entries that the random walk is
#: often quiescent (no entry being written, none pinned).
TINY = Shape(keys=4, blocks=8)


def _rare(what: str, shape: Shape = SMALL) -> SimulationPlan:
    """The plan of a defect that needs ``what``, not reached at production shape."""
    return SimulationPlan(
        shape,
        why=f"needs {what}; not reached in 60 s at production shape, where almost "
        "every step is an alloc",
    )


def _slow(what: str) -> SimulationPlan:
    """The plan of a defect found at production shape, but too late for the budget."""
    return SimulationPlan(
        SMALL,
        why=f"needs {what}; at production shape found only after 40 s or more, too "
        "close to the 60 s budget",
    )


#: The bug models not simulated at the production shape, and why; the
#: measurements (production shape vs plan) are in tla/README.md, "Simulation".
BUG_PLANS: dict[str, SimulationPlan] = {
    "MCBugPinAlwaysDecrements": _rare(
        "repeated pins of entries of size > 0 while few blocks are evictable (the "
        "counter must go below 0 for TypeOK to fail)"
    ),
    "MCBugUnpinDoubleAppend": _rare("pin, pin, unpin of one ready entry"),
    "MCBugUnpinForgetsCount": _rare(
        "a quiescent cache (no entry being written, none pinned) after the last unpin "
        "of an entry of size > 0; every alloc leaves an entry being written, so even "
        "at 8 keys, 16 blocks the walk was not quiescent in 60 s",
        TINY,
    ),
    "MCBugHeldIgnoresPins": _rare("a pinned entry while no entry is being written"),
    "MCBugEvictNewest": _slow("an alloc that evicts some but not all of the ready entries"),
    "MCBugFifoHeadInsert": _rare(
        "a ready entry re-queued at the head and an alloc that evicts it but not all"
    ),
    "MCBugEvictPinned": _slow("a pinned entry left queued and an alloc that evicts it"),
    "MCBugGdsfEvictFirstJoined": _rare(
        "ready entries of different priorities (sizes or hits) and an alloc that evicts only some"
    ),
    "MCBugS3FifoMainFirst": _rare(
        "a used (promoted) entry in M, probation entries in S holding SmallTarget "
        "blocks, and an alloc"
    ),
    "MCBugS3FifoHoldSmallOnly": _rare("a pin of an entry in M (promoted by an earlier use)"),
}


def simulation_plan(name: str) -> SimulationPlan:
    """The plan of the manifest model ``name``: its entry in :data:`BUG_PLANS`,
    else the production shape. O(1)."""
    return BUG_PLANS.get(name, SimulationPlan())


def scale_config(text: str, shape: Shape = PRODUCTION) -> str:
    """The config ``text`` with its constants scaled to ``shape``.

    Only constants the config assigns are rewritten (an s3fifo size appears
    only in s3fifo configs); overrides (``<-``) and every other line stay;
    ``VIEW`` and ``SYMMETRY`` lines are dropped (the simulator does not
    fingerprint, and a quotient view costs time). A multi-line ``Keys`` set is
    not expected (the manifest's configs write it on one line). O(len(text)).
    """
    values = shape.constants()
    out: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("VIEW", "SYMMETRY")):
            continue
        match = _CONSTANT.match(line)
        if match is not None and match.group("name") in values and "<-" not in line:
            name = match.group("name")
            line = f"{match.group('indent')}{name} = {values[name]}"
        out.append(line)
    return "\n".join(out) + "\n"


@dataclass(frozen=True)
class SimulationModel:
    """A simulation: a name and the manifest model whose config it scales."""

    name: str
    base: Model

    @property
    def plan(self) -> SimulationPlan:
        """Its shape and depth (:func:`simulation_plan`)."""
        return simulation_plan(self.base.name)


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
    by_name = {m.name: m for m in models}
    sims = [
        SimulationModel(f"MCSim{policy.capitalize().replace('fifo', 'Fifo')}", by_name[base])
        for policy, base in POLICY_BASES.items()
        if base in by_name
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


def simulation_command(
    java: Path,
    jar: Path,
    spec: str,
    config: str,
    *,
    depth: int,
    seed: int,
    traces: int,
    metadir: Path,
    check_deadlock: bool = True,
) -> list[str]:
    """The command line of :func:`simulation_batch` (for people and tests). O(1)."""
    batch = simulation_batch(
        spec,
        config,
        depth=depth,
        seed=seed,
        traces=traces,
        metadir=metadir,
        check_deadlock=check_deadlock,
    )
    return command_line(java, jar, batch)


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
    why_shape: str = ""  # why the shape is not the production shape (BUG_PLANS)

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

    ``shape`` and ``depth`` default to the model's plan (:func:`simulation_plan`:
    the production shape and 200 steps, but for the bug models of
    :data:`BUG_PLANS`). Batches of ``-simulate num=T`` run until a violation or the deadline; the
    first has ``first_batch`` traces, each next one is sized from the rate
    measured so far (80 % of the remaining time). A batch still running at
    the deadline is killed and not counted. The result is judged like a
    model run: ``pass`` if nothing was violated, else what TLC named; ``ok``
    if that is the base model's expectation. O(the budget).
    """
    plan = simulation_plan(base.name)
    shape = plan.shape if shape is None else shape
    depth = plan.depth if depth is None else depth
    why = plan.why if shape == plan.shape else ""
    if depth < 1 or seconds <= 0 or first_batch < 1:
        raise ValueError("depth, seconds and first_batch must be positive")
    java = locate_java() if java is None else java
    jar = locate_jar() if jar is None else jar
    label = name or f"MCSim{base.name[2:]}"
    config = read_config(tla_dir / base.config)
    scaled = scale_config((tla_dir / base.config).read_text(encoding="utf-8"), shape)
    start = time.monotonic()
    traces = states = 0
    seeds: list[int] = []
    output: TlcOutput | None = None
    raw = ""
    result = PASS
    note = ""
    to_violation: float | None = None
    batch = first_batch
    with tempfile.TemporaryDirectory(prefix=f"tlc-sim-{label}-") as tmp:
        cfg = Path(tmp) / f"{label}.cfg"
        cfg.write_text(scaled, encoding="utf-8")
        index = 0
        while True:
            remaining = seconds - (time.monotonic() - start)
            if remaining <= 0:
                break
            batch_seed = seed + index
            index += 1
            batch_start = time.monotonic()
            process = TlcProcess(
                java,
                jar,
                simulation_batch(
                    base.spec,
                    str(cfg),
                    depth=depth,
                    seed=batch_seed,
                    traces=batch,
                    metadir=Path(tmp) / f"meta{index}",
                    check_deadlock=base.check_deadlock,
                ),
                tla_dir,
                label=label,
                on_line=on_line,
            )
            finished = process.wait(remaining)
            process.stop()
            if not finished:
                note = f"a batch of {batch} traces was stopped at the deadline (not counted)"
                break
            raw = process.text
            output = parse_output(raw)
            seeds.append(batch_seed)
            batch_result = judge(base, output, config.properties)
            if (
                batch_result == "incomplete"
                and patterns.FINISHED.search(raw)
                and process.proc.returncode == 0
            ):
                batch_result = PASS  # a clean batch ends without a verdict line
            if batch_result not in (PASS, "incomplete"):
                result = batch_result
                to_violation = time.monotonic() - start
                states += max(
                    _count(patterns.SIMULATION_PROGRESS, raw),
                    _count(patterns.SIMULATION_GENERATED, raw),
                )
                traces += 1  # the violating behaviour (earlier ones of the batch are not printed)
                break
            if batch_result == "incomplete":
                result = "incomplete"
                note = "TLC stopped without a verdict: " + "\n".join(process.lines[-5:])
                break
            traces += batch
            states += _count(patterns.SIMULATION_PROGRESS, raw)
            per_trace = (time.monotonic() - batch_start) / batch
            left = seconds - (time.monotonic() - start)
            batch = max(1, int(0.8 * left / per_trace)) if per_trace > 0 else batch * 2
    elapsed = time.monotonic() - start
    ok = result == base.expect
    if ok and result == PASS and traces == 0:
        # A budget spent before one behaviour finished checked nothing: not a pass.
        ok, note = False, "no behaviour finished within the budget; raise --seconds"
    if not ok and not note:
        note = f"expected {base.expect}, got {result}"
    return SimulationResult(
        name=label,
        base=base,
        shape=shape,
        depth=depth,
        budget_seconds=seconds,
        result=result,
        ok=ok,
        seconds=elapsed,
        traces=traces,
        states=states,
        seeds=seeds,
        seconds_to_violation=to_violation,
        output=output,
        raw_output=raw,
        note=note,
        why_shape=why,
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
    (for progress). Serial: one TLC process at a time. O(bug models x seconds);
    about 10 s per model on an idle 2-core machine, ``seconds`` at most.
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
