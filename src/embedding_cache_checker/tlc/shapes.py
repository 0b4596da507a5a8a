"""What a simulation runs: its shape (keys, blocks, pin depth, level), its plan
(shape, behaviour length and why), and the config scaled to that shape.

The simulation configs are *derived*, not copied: :func:`scale_config`
rewrites a manifest model's config (its constants ``Keys``, ``N``,
``MaxPins``, ``Level``, and the policy's constants derived from ``N`` as the
code's policy derives them; its ``VIEW``/``SYMMETRY`` dropped),
so each bug model's defect (its ``Op <- BuggyOp`` override) and each
policy's full check list carry over unchanged and cannot drift.

Why a smaller shape for some bug models: TLC 2.15's simulator computes
*all* successors of a state and picks one uniformly, so at production shape
almost every step is an alloc: each absent key has 65 sizes (alloc or failed
alloc), a live key a handful of other actions (a production-shape
MCSimBugEvictPinned counterexample of 147 steps had 141 allocs, 128 of them
failed). A defect that needs a pin sequence, several ready entries or a
quiescent cache is then (almost) never reached. Those bug models are
simulated at a smaller shape, which their manifest entry sets (``simulation``:
keys, blocks, ..., and why; :func:`simulation_plan`; the measurements are in
tla/README.md, "Simulation"); the policies' main models and the other bug
models keep the production shape.

Why the counts level: at block level each ``Alloc`` step enumerates every
block set ``S \\in SUBSET Blocks`` (2^64 at 64 blocks), and the simulator
computes all successors of a state before picking one. At counts level an
alloc has no block choice (``BlockChoices = {{}}``): a step costs the
16 x 65 alloc arguments and the eviction loop. What the counts level cannot
express (which block ids) is checked exhaustively at block level.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .manifest import ManifestError, Model

#: A constant's assignment in a config (``Name = value``).
_CONSTANT = re.compile(r"^(?P<indent>\s*)(?P<name>\w+)\s*=\s*(?P<value>.+?)\s*$")


@dataclass(frozen=True)
class Shape:
    """The sizes a simulation config gets."""

    keys: int = 16
    blocks: int = 64
    max_pins: int = 4
    level: str = "counts"

    def constants(self) -> dict[str, str]:
        """The TLA+ text of each shared scaled constant (a policy's own derived ones:
        ``scale_config``). O(keys)."""
        return {
            "Keys": "{" + ", ".join(f"k{i}" for i in range(1, self.keys + 1)) + "}",
            "N": str(self.blocks),
            "MaxPins": str(self.max_pins),
            "Level": f'"{self.level}"',
        }


#: Near production shape (the issue's example).
PRODUCTION = Shape()

#: The behaviour length of every simulation unless asked otherwise.
DEFAULT_DEPTH = 200


@dataclass(frozen=True)
class SimulationPlan:
    """How a model is simulated: its shape, behaviour length, and why, when
    that is not the production shape."""

    shape: Shape = PRODUCTION
    depth: int = DEFAULT_DEPTH
    why: str = ""


#: The fields of a manifest entry's ``simulation`` that set the shape (the rest:
#: ``depth``, the behaviour length, and ``why``, the reason for leaving production).
SHAPE_FIELDS = ("keys", "blocks", "max_pins", "level")
#: The spec's levels (``Level``): which block ids, or only counts.
LEVELS = ("blocks", "counts")


def simulation_plan(model: Model) -> SimulationPlan:
    """The plan of the manifest model ``model``: the production shape and depth,
    but for what its ``simulation`` entry sets (keys, blocks, max_pins, level,
    depth), which must then say why. O(1).

    Raises:
        ManifestError: an unknown field, a wrong type, or a change without a why.
    """
    given = dict(model.simulation)
    unknown = set(given) - {*SHAPE_FIELDS, "depth", "why"}
    if unknown:
        raise ManifestError(f"{model.name}: unknown simulation field(s) {sorted(unknown)}")
    try:
        shape = Shape(**{f: given[f] for f in SHAPE_FIELDS if f in given})
        plan = SimulationPlan(
            shape, int(given.get("depth", DEFAULT_DEPTH)), str(given.get("why", ""))
        )
    except (TypeError, ValueError) as exc:
        raise ManifestError(f"{model.name}: bad simulation entry {given}: {exc}") from exc
    sizes = (shape.keys, shape.blocks, shape.max_pins, plan.depth)
    if not all(isinstance(n, int) and n > 0 for n in sizes) or shape.level not in LEVELS:
        raise ManifestError(f"{model.name}: bad simulation entry {given}")
    if (plan.shape, plan.depth) != (PRODUCTION, DEFAULT_DEPTH) and not plan.why:
        raise ManifestError(f"{model.name}: its simulation entry must say why (field 'why')")
    return plan


def policy_constants(text: str, shape: Shape, policy: str | None) -> dict[str, str]:
    """The constants of ``policy``'s module that the config ``text`` assigns and that
    derive from the pool size (s3fifo's ``SmallTarget``), as the code's policy derives
    them at ``shape.blocks`` (``verify.model_code.derived_constants``: one rule, no policy
    listed); {} for the core (``policy`` None). O(len(text)).

    Imports the runtime's registry, through the checker's replay, at call time: the
    one place this module needs more than the standard library (tlc/__init__.py).
    """
    if policy is None:
        return {}
    from ..verify.model_code import derived_constants  # the code's values, not a copy of them

    assigned = {}
    for line in text.splitlines():
        match = _CONSTANT.match(line)
        if match is not None and "<-" not in line:
            assigned[match.group("name")] = match.group("value")
    derived = derived_constants(policy, assigned, shape.blocks)
    return {name: str(value) for name, value in derived.items()}


def scale_config(text: str, shape: Shape = PRODUCTION, policy: str | None = None) -> str:
    """The config ``text`` of a model of ``policy`` (None: the core) with its constants
    scaled to ``shape``: the shared ones (``Shape.constants``) and the policy's derived
    ones (``policy_constants``).

    Only constants the config assigns are rewritten (a policy's constant appears
    only in its configs); overrides (``<-``) and every other line stay;
    ``VIEW`` and ``SYMMETRY`` lines are dropped (the simulator does not
    fingerprint, and a quotient view costs time). A multi-line ``Keys`` set is
    not expected (the manifest's configs write it on one line). O(len(text)).
    """
    values = {**shape.constants(), **policy_constants(text, shape, policy)}
    out: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("VIEW", "SYMMETRY")):
            continue
        match = _CONSTANT.match(line)
        if match is not None and match.group("name") in values and "<-" not in line:
            name = match.group("name")
            line = f"{match.group('indent')}{name} = {values[name]}"
        out.append(line)
    return "\n".join(out) + "\n"
