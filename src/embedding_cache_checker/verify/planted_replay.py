"""A planted bug replayed on its model's state graph: the planted step's replay link.

``replay_model`` picks the model a bug is replayed on (its rule's planted replay input,
from the policy's plan), ``planted_rule`` the alloc rule it runs under there, and
``planted_replay`` replays the graph on the code with the bug in place, stopping at
the first mismatch: a mismatch is the bug caught.
"""

from __future__ import annotations

import dataclasses

from embedding_cache.verification import LEASE_OPERATIONS

from .alloc_rule import AllocRule
from .graph_dump import DumpedModel
from .lease_replay import replay_any_graph
from .model_code import code_params
from .plans import PolicyPlan
from .planted import PlantedBug


def replay_model(bug: PlantedBug, plan: PolicyPlan) -> str:
    """The model ``bug`` is replayed on under ``plan``'s policy: the planted replay input
    of the bug's rule -- its lease replay input for a bug of a lease transition
    (``lease_transitions``), its admission one for a bug run with a filter, its contiguity
    one for a bug run with contiguity -- else its planted model. O(1).

    Raises:
        ValueError: the policy has no planted replay input of the bug's rule.
    """
    if bug.transition in LEASE_OPERATIONS:
        rule, model = "lease", plan.planted_lease
    elif bug.admission is not None:
        rule, model = "admission", plan.planted_admission
    elif bug.contiguity:
        rule, model = "contiguity", plan.planted_contiguity
    else:
        return plan.planted
    if model is None:
        raise ValueError(f"{plan.policy} has no {rule} replay input for {bug.name}")
    return model


def planted_rule(bug: PlantedBug, dump: DumpedModel) -> AllocRule:
    """The alloc rule ``bug`` is replayed under on ``dump``'s graph: the model's, with the
    bug's broken filter (a bug of the filter itself) in the real one's place. O(1).

    Raises:
        ValueError: the bug runs with another filter or contiguity bound than the model.
    """
    rule = dump.rule
    if bug.admission != rule.admission or bug.contiguity != rule.contiguity:
        raise ValueError(
            f"{bug.name} runs with filter {bug.admission!r} and contiguity {bug.contiguity}, "
            f"but {dump.name} with {rule.admission!r} and {rule.contiguity}"
        )
    broken = bug.broken_admission
    return rule if broken is None else dataclasses.replace(rule, admission=broken)


def planted_replay(bug: PlantedBug, policy: str, dump: DumpedModel) -> tuple[bool, str]:
    """Replay ``dump``'s graph on the code with ``bug`` under ``policy``; caught iff some
    step mismatches. The bug runs with the model's policy parameters. Stops at the first
    mismatch. O(edges until the first mismatch)."""
    result = replay_any_graph(
        dump.graph,
        dump.keys,
        dump.num_blocks,
        dump.max_pins,
        bug.operations(),
        max_mismatches=1,
        stop_at_first=True,
        policy=bug.eviction(policy, **code_params(policy, dump.policy_params)),
        rule=planted_rule(bug, dump),
    )
    if result.mismatches:
        m = result.mismatches[0]
        return True, f"{dump.name}: {m.step}: {m.detail}"[:240]
    return False, f"{dump.name}: every edge matched"
