"""The main job's steps' runners, in the order they run: each step's name
(``step_names``) with how it runs (once for all policies, or once per policy). A step
is a name in ``step_names``, a runner here and a verdict in ``verdicts.VERDICTS``;
tests/verify/test_main_job.py holds the three to one list of names."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .step_checks import run_crosshair_step, run_linearizability
from .step_models import run_conformance, run_tlc_step
from .step_nightly import run_distributed_step, run_simulate, run_stateful
from .step_planted import run_planted
from .step_traces import run_traces

if TYPE_CHECKING:
    from .options import Job


@dataclass(frozen=True)
class Step:
    """One step: its name and its runner (exactly one of ``run_once`` and
    ``run_per_policy``)."""

    name: str
    #: Runs once for all policies.
    run_once: Callable[[Job], None] | None = None
    #: Runs once per chosen policy; a crash fails that policy only.
    run_per_policy: Callable[[Job, str], None] | None = None


#: Every step, in the order it runs (``step_names.STEPS``).
STEP_TABLE: tuple[Step, ...] = (
    Step("tlc", run_once=run_tlc_step),
    Step("conformance", run_per_policy=run_conformance),
    Step("traces", run_per_policy=run_traces),
    Step("crosshair", run_once=run_crosshair_step),
    Step("planted", run_once=run_planted),
    Step("linearizability", run_per_policy=run_linearizability),
    Step("stateful", run_once=run_stateful),
    Step("simulate", run_once=run_simulate),
    Step("distributed", run_once=run_distributed_step),
)
#: The steps by name.
STEP_BY_NAME: dict[str, Step] = {step.name: step for step in STEP_TABLE}
