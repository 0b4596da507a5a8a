"""What the main job's steps record: one record per replayed model, validated trace and
planted bug, and how a step reports progress."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from .replay import GraphReplayReport
from .traces import TraceVerdict

#: The links a planted bug is shown to here (``planted.LAYERS`` names).
LINKS = ("replay", "traces", "crosshair")

#: Where a step writes its progress lines.
Progress = Callable[[str], None]


def stderr_progress(message: str) -> None:
    """Progress lines go to stderr, so ``--json`` output stays clean. O(len(message))."""
    print(f"[verify] {message}", file=sys.stderr, flush=True)


@dataclass
class ReplayRun:
    """One replay model's result."""

    policy: str
    model: str
    report: GraphReplayReport
    full: bool
    tlc_seconds: float
    seconds: float
    #: The ``ReplayDepth`` the graph was cut at (None: the config sets none).
    depth_bound: int | None = None
    #: True when the profile replaced the config's depth bound.
    depth_overridden: bool = False


@dataclass
class TraceRun:
    """One validated trace."""

    policy: str
    name: str
    verdict: TraceVerdict


@dataclass
class PlantedResult:
    """Which links caught one planted bug under one policy (None: the link need not)."""

    name: str
    policy: str
    kind: str  # "transition" (shared core) or "policy" (the policy's order rule)
    transition: str
    replay: bool | None = None
    traces: bool | None = None
    crosshair: bool | None = None
    notes: list[str] = field(default_factory=list)

    def link(self, name: str) -> bool | None:
        """The verdict of link ``name`` (one of ``LINKS``). O(1)."""
        value: bool | None = getattr(self, name)
        return value
