"""The step properties that hold of a cache under one policy: the shared ones
(``step_properties.STEP_PROPERTIES``), the policy's order property, and the
policy's own from its checker adapter (e.g. gdsf's GdsfClockInv).

Its own module, above both ``step_properties`` and the policy adapters: the
adapters define their predicates over ``step_properties.CodeStep``, and this
module reads the adapters, so neither of those imports the other's importer.
"""

from __future__ import annotations

from ..policies import adapter
from .step_properties import STEP_PROPERTIES, CodeStep, StepPredicate, order_kept


def properties_for(policy: str, order_property: str) -> dict[str, StepPredicate]:
    """Every step property of a cache with policy ``policy``, by name: the shared ones,
    the policy's order property and the policy's own (its checker adapter's
    ``step_properties``, e.g. gdsf's GdsfClockInv). O(1) after the adapter's import."""
    return {
        **STEP_PROPERTIES,
        order_property: order_kept,
        **adapter(policy).step_properties,
    }


def step_violations(step: CodeStep) -> list[tuple[str, str]]:
    """(name, detail) of every step property the step breaks, under the running policy.
    O(N + entries + the policy's abstract)."""
    policy = step.before.policy
    found = []
    for name, holds in properties_for(policy.name, policy.order_property).items():
        detail = holds(step)
        if detail is not None:
            found.append((name, detail))
    return found
