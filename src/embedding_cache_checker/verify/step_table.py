"""The main job's steps, in the order they run: each step's name, how it runs (once for
all policies, or once per policy) and its verdict. A step is added here, in one place;
``CI_STEPS``, ``EXTRA_STEPS`` and ``STEPS`` are derived from the table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import verdicts
from .step_checks import run_crosshair_step, run_linearizability
from .step_models import run_conformance, run_tlc
from .step_nightly import run_distributed, run_simulate, run_stateful
from .step_planted import run_planted
from .step_traces import run_traces

if TYPE_CHECKING:
    from .options import Job


@dataclass(frozen=True)
class Step:
    """One step: its name, its runner and its verdict (``verdicts``)."""

    name: str
    verdict: verdicts.Verdict
    #: Runs once for all policies (exactly one of ``run_once`` and ``run_per_policy``).
    run_once: Callable[[Job], None] | None = None
    #: Runs once per chosen policy; a crash fails that policy only.
    run_per_policy: Callable[[Job, str], None] | None = None
    #: True for a step only a profile's ``extra_steps`` runs.
    extra: bool = False


#: Every step, in the order it runs.
STEP_TABLE: tuple[Step, ...] = (
    Step("tlc", verdicts.tlc_ok, run_once=run_tlc),
    Step("conformance", verdicts.conformance_ok, run_per_policy=run_conformance),
    Step("traces", verdicts.traces_ok, run_per_policy=run_traces),
    Step("crosshair", verdicts.crosshair_ok, run_once=run_crosshair_step),
    Step("planted", verdicts.planted_ok, run_once=run_planted),
    Step("linearizability", verdicts.linearizability_ok, run_per_policy=run_linearizability),
    Step("stateful", verdicts.stateful_ok, run_once=run_stateful, extra=True),
    Step("simulate", verdicts.simulate_ok, run_once=run_simulate, extra=True),
    Step("distributed", verdicts.distributed_ok, run_once=run_distributed, extra=True),
)
#: The steps by name.
STEP_BY_NAME: dict[str, Step] = {step.name: step for step in STEP_TABLE}

#: The steps every profile runs, in the order they run.
CI_STEPS = tuple(step.name for step in STEP_TABLE if not step.extra)
#: The steps a profile may add (``Profile.extra_steps``), in the order they run.
EXTRA_STEPS = tuple(step.name for step in STEP_TABLE if step.extra)
#: Every step, in the order it runs.
STEPS = CI_STEPS + EXTRA_STEPS
