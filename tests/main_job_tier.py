"""The main job's tier: the tests that make a check of ``embedding-cache verify`` at the
main job's size, per policy, and so are left out of the README's test command.

Each of these runs TLC on a model of the manifest's default run that is not a bug
model, or dumps a policy's replay input and replays it on the real code, as the main
job's ``tlc``, ``conformance`` and ``planted`` steps do. Together they were half of
the README's test command's time (docs/MEASURED.md, "Feedback in minutes"). The
command deselects them (``-m "not main_job"``); ``python -m pytest -m main_job -n auto
--dist loadfile`` runs them, and CI (.ci/run) runs that after the command, so CI still
runs every test.

The command keeps whatever the fast tier (tests/fast_tier.py) names: each layer's
smallest TLC model (the core, a policy, leases, the alloc rules, the protocols) and
MCSmoke's replay. With the bug models it also keeps, it still runs TLC on every layer
and a replay, on small inputs, and shows each catches a bug.
tests/test_main_job_tier.py holds the list true.
"""

from __future__ import annotations

from fast_tier import in_fast_tier
from tlc.repro_models import MODELS

from embedding_cache_checker.tlc.manifest import default_models

#: test_models.py's check of one model of the default run against its expectation.
MODEL_CHECK = "tests/tlc/test_models.py::test_model_meets_expectation"
#: test_replay.py, whose per-policy tests dump and replay the policies' replay inputs.
REPLAY = "tests/verify/test_replay.py"

#: The main job's checks as tests: node ids relative to the repository root (a test
#: function's id stands for every parametrisation of it), each with the main job's step
#: that makes the same check.
MAIN_JOB_TIER: dict[str, str] = {
    # Every model of the default run that is not a bug model, against its expectation
    # (``embedding-cache tlc``). The bug models (tag ``bug``: 2 to 4 s each, bar two
    # liveness ones) stay in the command: they show each layer's TLC catches its bug.
    **{
        f"{MODEL_CHECK}[{m.name}]": "tlc"
        for m in default_models(MODELS)
        if "bug" not in m.tags and not in_fast_tier(f"{MODEL_CHECK}[{m.name}]")
    },
    # Each policy's invariants inductive, in every layer (``tlc --inductive``; the core's
    # two models stay in the command: seconds, and the planted one shows the check bites).
    "tests/tlc/test_inductive.py::test_each_policy_layer_is_inductive": "tlc",
    # Each policy's replay inputs, every edge on the real code, and its planted bugs.
    f"{REPLAY}::test_each_policy_replays_its_model_on_the_real_code": "conformance",
    f"{REPLAY}::test_each_policys_model_catches_every_planted_bug_of_that_policy": "planted",
    f"{REPLAY}::test_each_policy_replays_its_lease_model_on_the_real_code": "conformance",
    f"{REPLAY}::test_each_policy_replays_its_alloc_rule_models_on_the_real_code": "conformance",
    f"{REPLAY}::test_each_alloc_rule_model_catches_every_planted_bug_of_its_rule": "planted",
}


def in_main_job_tier(nodeid: str) -> bool:
    """Whether the test ``nodeid`` (pytest's, relative to the rootdir) is in the main job's
    tier: an entry names it or its function, and the fast tier does not name it. O(1)."""
    if in_fast_tier(nodeid):
        return False
    return nodeid in MAIN_JOB_TIER or nodeid.split("[", 1)[0] in MAIN_JOB_TIER
