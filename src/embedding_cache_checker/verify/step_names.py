"""The main job's step names, in the order they run: the steps every profile runs
(``CI_STEPS``) and the ones a profile may add (``EXTRA_STEPS``, ``Profile.extra_steps``).

Names only, so that what a run is asked for (``options``), its report and its verdicts
can name the steps without importing their runners; each name's runner is
``step_table``'s and its verdict ``verdicts``'s (a test holds the three to one list).
"""

from __future__ import annotations

#: The steps every profile runs, in the order they run.
CI_STEPS: tuple[str, ...] = (
    "tlc",
    "conformance",
    "traces",
    "crosshair",
    "planted",
    "linearizability",
)
#: The steps a profile may add (``Profile.extra_steps``), in the order they run.
EXTRA_STEPS: tuple[str, ...] = ("stateful", "simulate", "distributed")
#: Every step, in the order it runs.
STEPS = CI_STEPS + EXTRA_STEPS
