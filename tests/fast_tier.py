"""The fast tier: a few tests of every layer, the first command a contributor runs.

``python -m pytest -m fast -n 2`` (README.md, "The two commands") runs the tests below,
marked ``fast`` at collection (tests/conftest.py): each layer's cheapest test that
still runs the layer's own machinery (a TLC model, a replay of a state graph, a trace
TLC validates, a CrossHair search, a planted bug caught, a checked build). Whatever
the tier runs, the README's test command and ``embedding-cache verify`` run too (the
main job's tier, tests/main_job_tier.py, never takes a test of this one); the tier
only orders it first. Its run time: docs/MEASURED.md, "The fast tier".

A node id names one test, or, without a ``[...]`` suffix, every parametrisation of
it. tests/test_fast_tier.py holds the list true: every layer has an entry, and each
entry names a test that exists.
"""

from __future__ import annotations

#: Layer -> the node ids (relative to the repository root) the tier runs for it.
FAST_TIER: dict[str, tuple[str, ...]] = {
    "runtime unit tests": (
        "tests/test_cache_unit.py",
        "tests/test_leases.py",
        "tests/test_admission.py",
    ),
    "contracts and the checked builds": (
        # The CrossHair worker runs in a child under EMBEDDING_CACHE_CHECKED=full.
        "tests/crosshair/test_crosshair.py::test_a_condition_stopped_by_its_cap_gave_up",
        "tests/test_fast_tier.py::test_the_checked_build_reports_a_planted_bug",
    ),
    "stateful Hypothesis": ("tests/test_stateful.py::TestCacheMachine_fifo::runTest",),
    "TLC, the core": ("tests/tlc/test_models.py::test_model_meets_expectation[MCCore]",),
    "TLC, inductive invariants": (
        "tests/tlc/test_inductive.py::test_the_cores_invariants_are_inductive",
        "tests/tlc/test_inductive.py::test_a_planted_non_inductive_invariant_is_caught",
    ),
    "TLC, a policy": ("tests/tlc/test_models.py::test_model_meets_expectation[MCSmoke]",),
    "TLC, leases": (
        "tests/tlc/test_models.py::test_model_meets_expectation[MCBugLeaseExpireAtDeadline]",
    ),
    "TLC, admission": (
        "tests/tlc/test_models.py::test_model_meets_expectation[MCBugAdmissionForgetsDoor]",
    ),
    "TLC, contiguity": (
        "tests/tlc/test_models.py::test_model_meets_expectation[MCBugContiguityNever]",
    ),
    "TLC, admission with contiguity": (
        "tests/tlc/test_models.py::test_model_meets_expectation"
        "[MCBugAdmissionContiguityDeclineEvictsExtras]",
    ),
    "TLC, the protocols": (
        "tests/tlc/test_models.py::test_model_meets_expectation[MCProtocolVllm]",
    ),
    "state-graph replay": (
        "tests/verify/test_replay.py::test_smoke_every_edge_replays_on_the_real_transitions",
    ),
    "a planted bug caught": (
        "tests/verify/test_replay.py::test_smoke_replay_catches_each_planted_bug_it_can_show",
    ),
    "trace validation": (
        "tests/verify/test_traces.py::test_scripted_trace_with_escaped_keys_is_accepted",
        "tests/verify/test_traces.py::test_tampered_step_is_rejected_exactly_there",
    ),
    "CrossHair": (
        "tests/crosshair/test_crosshair.py::test_a_condition_stopped_by_its_cap_gave_up",
    ),
    "linearizability": (
        "tests/test_linearizability.py::test_the_real_cache_is_linearizable[fifo]",
        "tests/test_linearizability.py::test_a_linearizable_history_that_needs_reordering_and_backtracking",
    ),
    "the vLLM plugin": (
        # Its first test imports vLLM, the largest single cost of the tier (docs/MEASURED.md).
        "tests/vllm_plugin/test_vllm_events.py"
        "::test_a_traced_plugin_run_records_each_cache_call_under_its_event",
        # vLLM's real engine loop: the GPU encoder cache's leak, fixed in the plugin.
        "tests/vllm_plugin/test_real_loop.py::test_the_two_step_case_is_fixed_in_the_plugin",
        "tests/vllm_plugin/test_real_loop.py::test_the_plugin_without_its_keep_rule_leaks_again",
    ),
    "the tier itself": ("tests/test_fast_tier.py",),
}


def fast_ids() -> tuple[str, ...]:
    """Every node id of the tier, once. O(entries)."""
    return tuple(dict.fromkeys(i for ids in FAST_TIER.values() for i in ids))


def in_fast_tier(nodeid: str) -> bool:
    """Whether the test ``nodeid`` (pytest's, relative to the rootdir) is in the tier: an
    entry names it, its function (every parametrisation) or its file. O(entries)."""
    return any(
        nodeid == i or nodeid.startswith(i + "[") or nodeid.startswith(i + "::") for i in fast_ids()
    )
