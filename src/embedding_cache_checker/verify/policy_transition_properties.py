"""The transition properties that hold of a cache under one policy: the shared ones
(``transition_properties.TRANSITION_PROPERTIES``), the policy's order property, and
the policy's own from its checker adapter (e.g. gdsf's GdsfClockInv).

Its own module, above both ``transition_properties`` and the policy adapters: the
adapters define their predicates over ``transition_properties.CodeTransition``, and
this module reads the adapters, so neither of those imports the other's importer.
"""

from __future__ import annotations

from ..policies import adapter
from .transition_properties import (
    TRANSITION_PROPERTIES,
    CodeTransition,
    TransitionPredicate,
    order_kept,
)


def properties_for(policy: str, order_property: str) -> dict[str, TransitionPredicate]:
    """Every transition property of a cache with policy ``policy``, by name: the shared ones,
    the policy's order property and the policy's own (its checker adapter's
    ``transition_properties``, e.g. gdsf's GdsfClockInv). O(1) after the adapter's import."""
    return {
        **TRANSITION_PROPERTIES,
        order_property: order_kept,
        **adapter(policy).transition_properties,
    }


def transition_violations(transition: CodeTransition) -> list[tuple[str, str]]:
    """(name, detail) of every transition property the transition breaks, under the running policy.
    O(N + entries + the policy's abstract)."""
    policy = transition.before.policy
    found = []
    for name, holds in properties_for(policy.name, policy.order_property).items():
        detail = holds(transition)
        if detail is not None:
            found.append((name, detail))
    return found
