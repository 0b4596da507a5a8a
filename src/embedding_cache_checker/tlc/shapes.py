"""What a simulation runs: its shape (keys, blocks, pin depth, level), its plan
(shape, behaviour length and why), and the config scaled to that shape.

The simulation configs are *derived*, not copied: :func:`scale_config`
rewrites a manifest model's config (its constants ``Keys``, ``N``,
``MaxPins``, ``Level``, the s3fifo sizes; its ``VIEW``/``SYMMETRY`` dropped),
so each bug model's defect (its ``Op <- BuggyOp`` override) and each
policy's full check list carry over unchanged and cannot drift.

Why a smaller shape for some bug models: TLC 2.15's simulator computes
*all* successors of a state and picks one uniformly, so at production shape
almost every step is an alloc: each absent key has 65 sizes (alloc or failed
alloc), a live key a handful of other actions (a production-shape
MCSimBugEvictPinned counterexample of 147 steps had 141 allocs, 128 of them
failed). A defect that needs a pin sequence, several ready entries or a
quiescent cache is then (almost) never reached. Those bug models are
simulated at a smaller shape (:data:`BUG_PLANS`, each with its reason; the
measurements are in tla/README.md, "Simulation"); the policies' main models
and the other bug models keep the production shape.

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
        """The TLA+ text of each scaled constant (s3fifo's sizes as in every model:
        SmallTarget = Max(1, N div 10), GhostCapacity = N - SmallTarget)."""
        small = max(1, self.blocks // 10)
        return {
            "Keys": "{" + ", ".join(f"k{i}" for i in range(1, self.keys + 1)) + "}",
            "N": str(self.blocks),
            "MaxPins": str(self.max_pins),
            "Level": f'"{self.level}"',
            "SmallTarget": str(small),
            "GhostCapacity": str(self.blocks - small),
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


#: Half the production shape's keys, a quarter of its blocks: an absent key
#: has 17 alloc sizes instead of 65, so a state has ~8 x 17 alloc successors
#: instead of ~16 x 65, and pins, unpins and mark_ready are no longer lost
#: among them.
SMALL = Shape(keys=8, blocks=16)

#: Four keys, eight blocks: few enough live entries that the random walk is
#: often quiescent (no entry being written, none pinned).
TINY = Shape(keys=4, blocks=8)


def _rare(what: str, shape: Shape = SMALL) -> SimulationPlan:
    """The plan of a defect that needs ``what``, not reached at production shape."""
    return SimulationPlan(
        shape,
        why=f"needs {what}; not reached in 60 s at production shape, where almost "
        "every step is an alloc",
    )


def _slow(what: str) -> SimulationPlan:
    """The plan of a defect found at production shape, but too late for the budget."""
    return SimulationPlan(
        SMALL,
        why=f"needs {what}; at production shape found only after 40 s or more, too "
        "close to the 60 s budget",
    )


#: The bug models not simulated at the production shape, and why; the
#: measurements (production shape vs plan) are in tla/README.md, "Simulation".
BUG_PLANS: dict[str, SimulationPlan] = {
    "MCBugPinAlwaysDecrements": _rare(
        "repeated pins of entries of size > 0 while few blocks are evictable (the "
        "counter must go below 0 for TypeOK to fail)"
    ),
    "MCBugUnpinDoubleAppend": _rare("pin, pin, unpin of one ready entry"),
    "MCBugUnpinForgetsCount": _rare(
        "a quiescent cache (no entry being written, none pinned) after the last unpin "
        "of an entry of size > 0; every alloc leaves an entry being written, so even "
        "at 8 keys, 16 blocks the walk was not quiescent in 60 s",
        TINY,
    ),
    "MCBugHeldIgnoresPins": _rare("a pinned entry while no entry is being written"),
    "MCBugEvictNewest": _slow("an alloc that evicts some but not all of the ready entries"),
    "MCBugFifoHeadInsert": _rare(
        "a ready entry re-queued at the head and an alloc that evicts it but not all"
    ),
    "MCBugEvictPinned": _slow("a pinned entry left queued and an alloc that evicts it"),
    "MCBugGdsfEvictFirstJoined": _rare(
        "ready entries of different priorities (sizes or hits) and an alloc that evicts only some"
    ),
    "MCBugS3FifoMainFirst": _rare(
        "a used (promoted) entry in M, probation entries in S holding SmallTarget "
        "blocks, and an alloc"
    ),
    "MCBugS3FifoHoldSmallOnly": _rare("a pin of an entry in M (promoted by an earlier use)"),
}


def simulation_plan(name: str) -> SimulationPlan:
    """The plan of the manifest model ``name``: its entry in :data:`BUG_PLANS`,
    else the production shape. O(1)."""
    return BUG_PLANS.get(name, SimulationPlan())


def scale_config(text: str, shape: Shape = PRODUCTION) -> str:
    """The config ``text`` with its constants scaled to ``shape``.

    Only constants the config assigns are rewritten (an s3fifo size appears
    only in s3fifo configs); overrides (``<-``) and every other line stay;
    ``VIEW`` and ``SYMMETRY`` lines are dropped (the simulator does not
    fingerprint, and a quotient view costs time). A multi-line ``Keys`` set is
    not expected (the manifest's configs write it on one line). O(len(text)).
    """
    values = shape.constants()
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
