"""What a run of the main job is asked to do (``VerifyOptions``), and what its steps share
while it runs (``Job``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from embedding_cache.policies import EVICTION_POLICIES

from .plans import PolicyPlan, plan_for
from .profile import CI, Profile
from .records import Progress
from .step_names import CI_STEPS, STEPS

if TYPE_CHECKING:
    from .graph_dump import DumpedModel
    from .report import VerifyReport


@dataclass
class VerifyOptions:
    """What to run, and how hard."""

    tla_dir: Path
    steps: tuple[str, ...] = STEPS  # of the profile's steps, the ones that run
    workers: int = 2
    #: CPU s per CrossHair condition (default: the profile's, else crosshair_check's).
    crosshair_timeout: float | None = None
    policies: tuple[str, ...] = tuple(EVICTION_POLICIES)
    deep: bool = True  # also replay the depth-bounded deep models (PolicyPlan.bounded_replay)
    #: The tlc step checks what a run of every policy checks for the chosen ones: the
    #: shared layers' models too (the core's, and those a policy only stands in for:
    #: ``step_models.own_model``) and the larger instances (``step_models.LARGE_TAGS``).
    #: Off for ``--policy``'s quick run (which also sets ``deep`` off).
    full: bool = True
    profile: Profile = CI
    #: Run the two lanes of steps (``main_job.LANES``) beside each other; False: every
    #: step alone, one after another (each step's seconds then its own).
    lanes: bool = True

    @property
    def selected_steps(self) -> tuple[str, ...]:
        """The steps that run: the profile's (``CI_STEPS`` + its extras) among ``steps``."""
        return tuple(s for s in CI_STEPS + self.profile.extra_steps if s in self.steps)

    def plan(self, policy: str) -> PolicyPlan:
        """``policy``'s plan, from the manifest in ``tla_dir`` (``plans.plan_for``). O(entries).

        Raises:
            PlanError: the manifest lacks a part of the plan (named in the message).
        """
        return plan_for(policy, self.tla_dir)

    @property
    def project_root(self) -> Path:
        """The repository root (the parent of tla/): where tests/ is."""
        return self.tla_dir.resolve().parent


@dataclass
class Job:
    """One run of the main job: its options, the report its steps fill in, where they say
    how it goes, and the state graphs the conformance step keeps for the planted step."""

    options: VerifyOptions
    report: VerifyReport
    progress: Progress
    #: Per policy: its planted bugs' replay model, dumped by the conformance step.
    dumped: dict[str, dict[str, DumpedModel]] = field(default_factory=dict)
