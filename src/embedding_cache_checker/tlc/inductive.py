"""``tlc --inductive``: which models show each layer's invariants inductive, and their table.

An *inductive model* (tag ``inductive``; tla/core/EmbeddingCacheInductive.tla) starts
from every state of TypeOK /\\ Inv at small bounds, takes one step of its layer's
Next and checks Inv again: it passes iff Inv is inductive there. The core has one
(MCInductiveCore) and its planted twin, which checks QuiescenceInv alone and must
fail (MCInductiveQuiescenceAlone: an invariant that holds on every reachable state
but is not inductive without the lemmas it leans on); every policy has one per
layer, derived from the manifest's families (the policy with its ghosts, leases,
admission, contiguity, the last two at once), and fifo a planted twin of its own
(MCInductiveFifoNoLemma: its order property without the lemma QueueStampOrderInv).
They are outside the default run (``default_run`` false): ``tlc --inductive``, ``tlc inductive`` and
``verify`` run them (spec/SPEC.md section 15).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..text_table import render_table
from .manifest import Model
from .report import count_text
from .runner import ModelResult

#: The tag of every inductive model, and of a planted one (it must fail).
INDUCTIVE_TAG = "inductive"
PLANTED = "planted"
#: The tag naming a layer's inductive model: ``lease_inductive``, ... (its family's id).
LAYER_SUFFIX = "_" + INDUCTIVE_TAG


def inductive_models(models: Iterable[Model], policy: str | None = None) -> list[Model]:
    """The inductive models of the core and of ``policy`` (every policy's when None),
    in manifest order. O(models)."""
    return [
        m
        for m in models
        if INDUCTIVE_TAG in m.tags and (m.policy is None or policy in (None, m.policy))
    ]


def layer_of(model: Model) -> str:
    """The layer an inductive model checks: ``lease``, ``admission``, ``contiguity`` or
    ``combined`` (the last two at once) from its tag ``LAYER_inductive``, its family's
    id (not the layer's own tag, which selects the layer's reachable-state models),
    else ``policy`` for a policy's own model and ``core`` for the core's. O(tags)."""
    for tag in model.tags:
        if tag.endswith(LAYER_SUFFIX):
            return tag.removesuffix(LAYER_SUFFIX)
    return "core" if model.policy is None else "policy"


def inductive_table(results: list[ModelResult]) -> str:
    """One row per inductive model: its layer, the initial states (every state of
    TypeOK /\\ Inv, one per renaming of the keys), the distinct states, seconds and
    the verdict. O(results)."""
    rows = [
        [
            r.model.name,
            r.model.policy or "-",
            layer_of(r.model),
            r.model.expect,
            r.result,
            count_text(r.output.initial_states),
            count_text(r.output.distinct_states),
            f"{r.seconds:.1f}",
            "ok" if r.ok else f"FAIL ({r.note})",
        ]
        for r in results
    ]
    headers = [
        "model",
        "policy",
        "layer",
        "expected",
        "result",
        "initial states",
        "distinct states",
        "seconds",
        "verdict",
    ]
    return render_table(headers, rows, right={5, 6, 7})
