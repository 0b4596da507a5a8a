"""The main job's report, as data: every step's results, per policy, its errors and
timings (``VerifyReport``). The verdicts read from it are ``verdicts``'s, its JSON
``report_json``'s."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from embedding_cache.policies import EVICTION_POLICIES

from ..tlc.runner import ModelResult
from ..tlc.simulate import SimulationResult
from .crosshair_check import CrosshairResult
from .profile import CI, Profile
from .pytest_run import PytestRun
from .records import PlantedResult, ReplayRun, TraceRun
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
