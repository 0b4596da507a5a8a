"""The main job's report: every step's results, per policy, its errors and timings, and
the verdicts read from them (``VerifyReport``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from embedding_cache.policies import EVICTION_POLICIES

from ..tlc.runner import ModelResult
from ..tlc.simulate import SimulationResult
from . import report_json
from .crosshair_check import CrosshairResult
from .profile import CI, Profile
from .records import PlantedResult, ReplayRun, TraceRun
from .stateful_step import PytestRun
from .step_table import STEP_BY_NAME, STEPS
from .tlc_steps import BigModelRun

_R = TypeVar("_R", ReplayRun, TraceRun, PlantedResult)


@dataclass
class VerifyReport:
    """Everything the main job found."""

    policies: tuple[str, ...] = tuple(EVICTION_POLICIES)
    tlc: list[ModelResult] = field(default_factory=list)
    tlc_policy: dict[str, str | None] = field(default_factory=dict)  # model -> its policy
    tlc_jar: str = ""
    tlc_version: str = ""
    replays: list[ReplayRun] = field(default_factory=list)
    traces: list[TraceRun] = field(default_factory=list)
    crosshair: CrosshairResult | None = None
    planted: list[PlantedResult] = field(default_factory=list)
    #: Per policy: ``lin.linearizability_report`` of that policy alone.
    linearizability: dict[str, dict[str, Any]] = field(default_factory=dict)
    stateful: PytestRun | None = None
    simulations: list[SimulationResult] = field(default_factory=list)
    big_models: list[BigModelRun] = field(default_factory=list)
    profile: Profile = CI
    seconds: dict[str, float] = field(default_factory=dict)
    #: Per policy: wall seconds of its parts (conformance, traces, planted_replay, ...).
    policy_seconds: dict[str, dict[str, float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    policy_errors: dict[str, list[str]] = field(default_factory=dict)

    def add_seconds(self, policy: str, part: str, seconds: float) -> None:
        """Count ``seconds`` of wall time for ``part`` of ``policy``'s checks. O(1)."""
        mine = self.policy_seconds.setdefault(policy, {})
        mine[part] = mine.get(part, 0.0) + seconds

    def fail(self, policy: str | None, step: str, message: str) -> None:
        """Record an error of ``step`` (for ``policy``, or for all). O(1)."""
        text = f"{step}{f' [{policy}]' if policy else ''}: {message}"
        self.errors.append(text)
        if policy is not None:
            self.policy_errors.setdefault(policy, []).append(text)

    # ------------------------------------------------------------ selecting

    def tlc_results(self, policy: str | None) -> list[ModelResult]:
        """The TLC results of ``policy``'s own models (None: of every model). O(models)."""
        if policy is None:
            return self.tlc
        return [r for r in self.tlc if self.tlc_policy.get(r.model.name) == policy]

    @staticmethod
    def of_policy(items: Iterable[_R], policy: str | None) -> list[_R]:
        """The records of ``policy`` among ``items`` (None: all of them). O(items)."""
        return [x for x in items if policy is None or x.policy == policy]

    # ------------------------------------------------------------ verdicts

    def step_ok(self, step: str, policy: str | None = None) -> bool | None:
        """True/False for a step that ran (for one policy, or all), None for one skipped.
        The step's own verdict (``step_table.STEP_TABLE``) after the checks all share.
        O(the step's results)."""
        if step not in self.seconds:
            return None
        if policy is not None and any(
            e.startswith(f"{step} [") for e in self.policy_errors.get(policy, [])
        ):
            return False
        return STEP_BY_NAME[step].verdict(self, policy)

    def policy_ok(self, policy: str) -> bool:
        """True iff every step that ran held for ``policy`` and nothing of its errored."""
        return all(self.step_ok(s, policy) is not False for s in STEPS) and not (
            self.policy_errors.get(policy)
        )

    @property
    def ok(self) -> bool:
        """True iff every step that ran held, for every policy, and nothing errored."""
        return not self.errors and all(self.step_ok(s) is not False for s in STEPS)

    def to_json(self) -> dict[str, Any]:
        """The report as one JSON object (the documented keys first; ``report_json``)."""
        return report_json.report_json(self)
