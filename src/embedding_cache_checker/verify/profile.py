"""Profiles of the main job: how hard ``embedding-cache verify`` checks, as data.

A profile is a frozen record of budgets and switches, selected by name
(``--profile``); the steps of ``main_job`` read it and hold no budgets of their own
beyond their defaults. ``ci`` is the 15-minute job every change runs; ``nightly``
goes further where more time buys more coverage:

* the deep replay model (fifo's MCReplayDeep) cut deeper (``replay_depth``), so
  evictions of two victims are replayed at the deep constants;
* more CPU seconds per CrossHair condition;
* the Hypothesis state machines (tests/test_stateful.py) under the ``thorough``
  settings profile (tests/conftest.py);
* TLC simulation at production shape of every policy (and of the bug models);
* the big models (manifest ``default_run: false``) checked by distributed TLC
  with local workers;
* more linearizability histories per policy.
"""

from __future__ import annotations

from dataclasses import dataclass

from .lin.report import MUTANT_BUDGET


@dataclass(frozen=True)
class Profile:
    """The budgets and switches of one run of the main job."""

    name: str
    #: The ``ReplayDepth`` the depth-bounded replay models are dumped with; None keeps
    #: the bound their configs set (MCReplayDeep.cfg: 4).
    replay_depth: int | None = None
    #: The clean check's CrossHair budget per condition, in CPU seconds at
    #: ``crosshair_budget.PATHS_PER_SECOND``, run as a fixed number of paths
    #: (``crosshair_budget.paths_for``); None: PER_CONDITION_SECONDS.
    crosshair_timeout: float | None = None
    #: Concurrent histories of the real cache checked per policy (linearizability);
    #: each mutant is hunted for at most ``lin_mutant_budget`` histories.
    lin_histories: int = 200
    lin_mutant_budget: int = MUTANT_BUDGET
    #: The Hypothesis settings profile the stateful tests run under (a subprocess
    #: step, ``stateful``); None: no such step.
    hypothesis_profile: str | None = None
    #: Seconds of TLC simulation per policy's main model (``simulate`` step), and per
    #: bug model when ``simulate_bugs``; 0: no such step.
    simulate_seconds: float = 0.0
    simulate_bugs: bool = False
    simulate_bug_seconds: float = 0.0
    #: Check the manifest's big models (``default_run`` false) with distributed TLC and
    #: this many local workers (``distributed`` step); 0: no such step.
    distributed_workers: int = 0
    #: Where the JSON report is written (``--json-out`` overrides); None: nowhere.
    json_out: str | None = None

    @property
    def extra_steps(self) -> tuple[str, ...]:
        """The steps beyond the CI job's that this profile runs, in order."""
        chosen = {
            "stateful": self.hypothesis_profile is not None,
            "simulate": self.simulate_seconds > 0,
            "distributed": self.distributed_workers > 0,
        }
        return tuple(step for step, on in chosen.items() if on)

    def to_json(self) -> dict[str, object]:
        """The profile's settings, for the report (so a run says how hard it checked)."""
        return {
            "name": self.name,
            "replay_depth": self.replay_depth,
            "crosshair_timeout": self.crosshair_timeout,
            "lin_histories": self.lin_histories,
            "lin_mutant_budget": self.lin_mutant_budget,
            "hypothesis_profile": self.hypothesis_profile,
            "simulate_seconds": self.simulate_seconds,
            "simulate_bugs": self.simulate_bugs,
            "simulate_bug_seconds": self.simulate_bug_seconds,
            "distributed_workers": self.distributed_workers,
        }


#: Every change: the job sized for feedback on 2 cores (its run time: docs/MEASURED.md,
#: "embedding-cache verify (the ci profile)").
CI = Profile(
    name="ci",
    # The clean CrossHair check at 15 paths per condition (the tests' budget), not 45:
    # at 45 it took a large share of the ci run's CPU on two cores, and found
    # nothing at either budget (docs/MEASURED.md, "CrossHair budgets"); the nightly
    # profile searches each condition 18 times as deep.
    crosshair_timeout=0.5,
)

#: Once a night: deeper, longer, bigger.
NIGHTLY = Profile(
    name="nightly",
    # Unbounded is out of reach: each step deeper multiplies the graph. Depth 5 is the
    # deepest whose dump and replay fit the nightly run on 2 cores, and the first with
    # two-victim evictions (depth 4 has none): docs/MEASURED.md, "The deep replay's depth".
    replay_depth=5,
    crosshair_timeout=9.0,  # 6x PER_CONDITION_SECONDS
    lin_histories=1000,
    hypothesis_profile="thorough",
    simulate_seconds=300.0,
    simulate_bugs=True,
    simulate_bug_seconds=60.0,
    distributed_workers=2,
    json_out="verify-nightly.json",
)

#: The profiles by name (``--profile``).
PROFILES: dict[str, Profile] = {p.name: p for p in (CI, NIGHTLY)}


def get_profile(name: str) -> Profile:
    """The profile called ``name``.

    Raises:
        KeyError: no profile has that name (the message lists them).
    """
    try:
        return PROFILES[name]
    except KeyError:
        raise KeyError(f"unknown profile {name!r}; choose from {sorted(PROFILES)}") from None
