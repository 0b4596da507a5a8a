"""The real engine's traces, checked by TLC against the cache's spec and the protocol model.

``embedding-cache tlc --engine-trace`` records runs of vLLM 0.33's real scheduler on one
small stream (``ENGINE_TRACE``; the harness of ``engine``, with the project's cache
traced and the engine's events recorded, the fake clock in whole seconds) and checks
each two ways:

1. **the cache's calls against the cache's spec**: every call legal and every result as
   specified (``traces.validate_traces``: tla/trace/EmbeddingCacheTrace.tla, or its
   lease spec for the plugin's leases); the cache is right under every scheduler, so
   every one must be accepted;
2. **the merged record against the protocol model** (``protocol_steps``,
   ``protocol_traces``: tla/trace/EmbeddingCacheProtocolTrace.tla over
   tla/protocol/EmbeddingCacheProtocol.tla with the scheduler's order), checking
   CheckedHitPinnedProp, SaveOfComputedProp, the cache invariants and, at the end,
   SaveResolvedAtEndInv and LoadPinReleasedAtEndInv.

The real loop (``LOOP_TRACES``, ``embedding_cache_checker.engine_loop.traces``) is
checked the same way, with the model's GPU encoder cache (``GpuCache``; ``KeepRule``
for the plugin): vLLM's engine-core scheduler, its GPU encoder cache in front of the
connector, on a small random stream (accepted, both orders, both scheduler
classes) and on the hand-written leak (``LEAK_SCRIPT``), where vLLM's order is
rejected at ``SaveOfComputedProp`` and the plugin accepted.

The schedulers (``SCHEDULERS``): vLLM's ``ECCPUScheduler`` on the project's cache
(``vllm``: order "vllm"), the plugin (``plugin``: "safe"), and the plugin's planted bugs
(``engine.planted``). What each must get from the protocol check (``expected``): vLLM's
order is rejected by a named property exactly when the run lost a checked hit or
dispatched a save never made (the harness's own counters), the plugin is accepted, a
planted bug is rejected.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine import CacheChoice, EngineSpec, RunResult, Settings, StreamSpec, run
from ..engine.planted import PLANTED
from ..engine.stream import catalogue
from .alloc_rule import SEED_RULE
from .protocol_steps import protocol_steps
from .protocol_traces import ProtocolRecord, ProtocolVerdict, validate_protocol
from .traces import TraceVerdict, validate_traces

#: The pool and stream of the engine traces: 16 blocks (the cache's trace spec takes an
#: alloc's blocks as any subset of the pool, 2^16 of them: a bigger pool makes its check
#: slow), items of 1 to 4 blocks from 12 keys, 1 to 3 items per request, one request per
#: scheduler step (the protocol model's step: a request the engine checks and then does
#: not schedule releases its check pins when the step's meta is built, which is the
#: model's Unschedule only when the step holds that request alone), 20% of them not
#: scheduled, 30 steps. Seed 0: upstream's order loses a checked hit at step 18.
ENGINE_TRACE = (
    Settings(num_blocks=16),
    StreamSpec(
        steps=30,
        seed=0,
        catalogue=12,
        rows=(1, 4),
        requests_per_step=(1, 1),
        items_per_request=(1, 3),
        unscheduled=0.2,
    ),
)
#: The clock's step: whole seconds, as the lease trace spec reads time.
STEP_SECONDS = 1.0
#: Each scheduler: what runs, and the protocol model's order for it.
SCHEDULERS: dict[str, tuple[CacheChoice, str]] = {
    "vllm": (CacheChoice("project", traced=True), "vllm"),
    "plugin": (CacheChoice("plugin", traced=True), "safe"),
    **{name: (CacheChoice("plugin", traced=True, planted=name), "safe") for name in PLANTED},
}
#: What each scheduler is, for reports.
DESCRIPTIONS = {
    "vllm": "vLLM's ECCPUScheduler (vLLM's order) on the project's cache",
    "plugin": "the plugin's VerifiedECCPUScheduler (the safe order)",
    **{name: f"the plugin with a planted bug: {bug}" for name, bug in PLANTED.items()},
}
#: The real loop's recorded runs: (its scheduler in ``engine_loop.traces``, the leak
#: script or the random stream, the protocol verdict it must get).
LOOP_TRACES: dict[str, tuple[str, bool, str]] = {
    "loop-vllm": ("loop-vllm", False, "accepted"),
    "loop-plugin": ("loop-plugin", False, "accepted"),
    "loop-vllm-sync": ("loop-vllm-sync", False, "accepted"),
    "loop-plugin-sync": ("loop-plugin-sync", False, "accepted"),
    "loop-vllm-leak": ("loop-vllm", True, "violated"),
    "loop-plugin-leak": ("loop-plugin", True, "accepted"),
}
DESCRIPTIONS.update(
    {
        name: (
            f"vLLM's real {'Scheduler' if 'sync' in name else 'AsyncScheduler'} with "
            f"{'its ECCPUScheduler on the project cache' if 'vllm' in name else 'the plugin'}"
            f"{', the GPU encoder cache leak script' if leak else ''}"
        )
        for name, (_, leak, _) in LOOP_TRACES.items()
    }
)
#: What ``--engine-trace`` checks when no scheduler is named.
DEFAULT_SCHEDULERS = ("vllm", "plugin", "loop-vllm-leak", "loop-plugin-leak")


@dataclass
class EngineRecord:
    """One recorded run of a scheduler."""

    name: str  # a key of SCHEDULERS
    order: str  # the protocol model's Order
    result: RunResult
    need: dict[str, int]  # each item's size in blocks

    @property
    def num_blocks(self) -> int:
        return self.result.spec.settings.num_blocks

    def protocol_record(self) -> ProtocolRecord:
        """The run's merged record as the protocol trace spec reads it."""
        settings = self.result.spec.settings
        assert self.result.trace is not None
        steps = protocol_steps(
            self.result.events, self.result.trace, settings.num_blocks, settings.ranks
        )
        return ProtocolRecord(steps, settings.num_blocks, self.order, self.need, settings.role)


def record(
    name: str, settings: Settings = ENGINE_TRACE[0], stream: StreamSpec = ENGINE_TRACE[1]
) -> EngineRecord:
    """Run scheduler ``name`` (of ``SCHEDULERS``) on ``stream``, its cache traced and its
    events recorded, the clock in whole seconds. O(stream x pool).

    Raises:
        KeyError: no such scheduler; VllmMissingError: vLLM cannot be imported.
    """
    choice, order = SCHEDULERS[name]
    spec = EngineSpec(stream, settings, choice, step_seconds=STEP_SECONDS, record_events=True)
    keys, rows, _ = catalogue(stream)
    return EngineRecord(name, order, run(spec), dict(zip(keys, rows, strict=True)))


@dataclass
class EngineTraceVerdict:
    """Both checks of one recorded run, and whether they are what that scheduler must get."""

    name: str
    label: str  # the cache choice's label
    lost: int  # checked hits the run lost (the harness's count)
    never_made: int  # saves it dispatched that the worker never made
    cache: TraceVerdict
    protocol: ProtocolVerdict
    expected: str  # what the protocol check must say: "accepted", "rejected", "violated"

    @property
    def ok(self) -> bool:
        """The cache's calls accepted, and the protocol verdict as expected."""
        p = self.protocol
        said = {
            "accepted": p.accepted,
            "rejected": not p.accepted and p.step is not None,
            "violated": p.violated is not None,
        }
        return self.cache.accepted and said[self.expected]

    def lines(self) -> list[str]:
        """The report of this run: a header, then one line per check."""
        c = self.cache
        cache = "accepted" if c.accepted else f"REJECTED at call {c.matched + 1} {c.detail}"
        return [
            f"{self.name}: {DESCRIPTIONS[self.name]}; checked hits lost: {self.lost}, "
            f"saves never made: {self.never_made}",
            f"  cache spec: {cache} ({c.steps} calls; TLC {c.seconds:.1f} s)",
            f"  protocol:   {self.protocol.said()} (TLC {self.protocol.seconds:.1f} s)",
            f"  expected:   {self.expected}: {'ok' if self.ok else 'NOT MET'}",
        ]

    def to_json(self) -> dict[str, Any]:
        """The verdicts as JSON."""
        return {
            "scheduler": self.name,
            "choice": self.label,
            "checked_hits_lost": self.lost,
            "saves_never_made": self.never_made,
            "cache": dataclasses.asdict(self.cache) | {"first_rejected": None},
            "protocol": dataclasses.asdict(self.protocol),
            "expected": self.expected,
            "ok": self.ok,
        }


def expected(rec: EngineRecord) -> str:
    """What the protocol check must say of ``rec``: vLLM's order is violated (a named
    property or invariant) iff the harness counted a lost hit or an unmade save; the
    plugin is accepted; a planted bug is rejected."""
    c = rec.result.counters
    if rec.name == "vllm":
        return "violated" if c.checked_hits_lost or c.saves_never_made else "accepted"
    return "accepted" if rec.name == "plugin" else "rejected"


def check(rec: EngineRecord, tla_dir: Path, timeout: float = 300.0) -> EngineTraceVerdict:
    """Both checks of ``rec`` with TLC. O(TLC on the two traces)."""
    trace = rec.result.trace
    assert trace is not None
    [cache] = validate_traces([(trace, rec.num_blocks, SEED_RULE)], tla_dir, timeout=timeout)
    protocol = validate_protocol(rec.protocol_record(), tla_dir, timeout)
    c = rec.result.counters
    label = rec.result.spec.choice.label()
    return EngineTraceVerdict(
        rec.name, label, c.checked_hits_lost, c.saves_never_made, cache, protocol, expected(rec)
    )


def check_engine_traces(
    names: Sequence[str],
    tla_dir: Path,
    settings: Settings = ENGINE_TRACE[0],
    stream: StreamSpec = ENGINE_TRACE[1],
) -> list[EngineTraceVerdict]:
    """Record each scheduler of ``names`` on ``stream`` and check it. O(runs x TLC).

    Raises:
        KeyError: an unknown scheduler; VllmMissingError: vLLM cannot be imported.
    """
    return [
        check_loop(name, tla_dir)
        if name in LOOP_TRACES
        else check(record(name, settings, stream), tla_dir)
        for name in names
    ]


def check_loop(name: str, tla_dir: Path, timeout: float = 300.0) -> EngineTraceVerdict:
    """Record real-loop run ``name`` (of ``LOOP_TRACES``) and check it both ways.
    O(the run + TLC on the two traces).

    Raises:
        VllmMissingError: vLLM cannot be imported.
    """
    from ..engine_loop import traced
    from ..engine_loop.model_dir import write_model_dir
    from ..engine_loop.traces import LOOP_SCHEDULERS, record_loop

    scheduler, leak, must = LOOP_TRACES[name]
    model = write_model_dir(Path(tempfile.mkdtemp(prefix="embedding-cache-llava-")))
    result, need, settings = record_loop(scheduler, model, leak=leak)
    trace = traced.last_trace()
    events = result.scheduler.ec_connector.events
    [cache] = validate_traces([(trace, settings.ec_blocks, SEED_RULE)], tla_dir, timeout=timeout)
    steps = protocol_steps(events, trace, settings.ec_blocks, settings.ranks)
    order = LOOP_SCHEDULERS[scheduler][1]
    record = ProtocolRecord(steps, settings.ec_blocks, order, need, settings.role, gpu_cache=True)
    protocol = validate_protocol(record, tla_dir, timeout)
    lost, never_made = result.connector.checked_hits_lost, result.worker.saves_never_made
    return EngineTraceVerdict(name, settings.connector, lost, never_made, cache, protocol, must)


def describe(settings: Settings, stream: StreamSpec) -> str:
    """The header line of a report: the pool and the stream."""
    low, high = stream.rows
    return (
        f"engine traces: {settings.num_blocks} blocks, {stream.steps} steps of "
        f"{stream.requests_per_step[0]}-{stream.requests_per_step[1]} requests, "
        f"{stream.items_per_request[0]}-{stream.items_per_request[1]} items of {low}-{high} "
        f"blocks from {stream.catalogue} keys, {stream.unscheduled:.0%} not scheduled, "
        f"seed {stream.seed}, fifo"
    )
