"""Trace validation of the engine's protocol: a recorded run against tla/protocol/'s model.

The steps of one run of the real scheduler (``protocol_steps``) are written into a
generated module ``ProtocolTraceData`` (the definition ``ProtocolTrace``, the items
``TraceKeys`` and their sizes ``TraceNeed``) and checked by
``tla/trace/EmbeddingCacheProtocolTrace.tla``, which extends it and
``EmbeddingCacheProtocol`` (fifo, counts level) with the scheduler's ``Order``: vLLM's
``ECCPUScheduler`` is ``"vllm"``, the plugin ``"safe"``. TLC follows the one path the
trace allows and checks, along it, the protocol's action properties and the cache's
invariants (``CHECKS``). The verdict (``ProtocolVerdict``) is one of three: accepted
(every step taken, every check held); a check violated, named, at the step TLC stopped
(the ``i`` of its last state); or no step of the model, at the first step the model
could not take (the step after the largest ``i`` that ``TraceProgress`` printed). One
trace per TLC run: a violation ends the run. The staging (every module of tla/ copied
beside the generated one) is ``traces``'s.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..tlc import patterns
from ..tlc.output import TlcOutcome
from ..tlc.runner import TlcRun, run_tlc
from .protocol_steps import MODEL_ACTIONS, ProtocolStep
from .traces import copy_modules, tla_post, tla_string

#: The root module TLC checks, and the module the tooling generates for it.
PROTOCOL_TRACE_SPEC, PROTOCOL_TRACE_DATA = "EmbeddingCacheProtocolTrace", "ProtocolTraceData"
#: The protocol's action properties, checked on every step of the trace.
PROPERTIES = ("CheckedHitPinnedProp", "SaveOfComputedProp")
#: The invariants, checked in every state: the protocol's and the cache's (as the
#: protocol models check them), then the liveness properties' stand-ins at the end.
INVARIANTS = (
    "ProtocolTypeOK",
    "BlockConservationInv",
    "EvictableSetInv",
    "EvictableCountInv",
    "HeldEntriesInv",
    "QuiescenceInv",
    "SaveResolvedAtEndInv",
    "LoadPinReleasedAtEndInv",
)
#: Every check, in the order a verdict lists them.
CHECKS = PROPERTIES + INVARIANTS
#: The model's Roles of each ``ECTransferConfig.ec_role``.
ROLES = {
    "ec_both": ("producer", "consumer"),
    "ec_producer": ("producer",),
    "ec_consumer": ("consumer",),
}
#: The model's Order of each scheduler.
ORDERS = ("vllm", "safe")


@dataclass(frozen=True)
class ProtocolRecord:
    """One run's steps and what the model needs to read them."""

    steps: Sequence[ProtocolStep]
    num_blocks: int
    order: str  # the scheduler's order: "vllm" or "safe"
    need: Mapping[str, int]  # each item's size in blocks (its rows)
    role: str = "ec_both"
    #: The run had vLLM's GPU encoder cache (the real loop): the model's GpuCache, and
    #: its KeepRule for the safe order (the plugin's rule).
    gpu_cache: bool = False


@dataclass
class ProtocolVerdict:
    """TLC's verdict on one recorded run."""

    steps: int
    accepted: bool
    #: The property or invariant TLC reported violated; None when accepted, or when the
    #: model has no step for the record (then ``step`` is the first it could not take).
    violated: str | None
    step: int | None  # 1-based: the step where the trace broke
    event: str  # that step's event and call
    act: str  # that step's act (the model's action)
    seconds: float  # TLC's wall time
    detail: str = ""  # TLC's failure, when it gave no verdict

    def said(self) -> str:
        """One line: accepted, or rejected with the check and the step."""
        if self.accepted:
            return f"accepted ({self.steps} steps)"
        if self.step is None:
            return f"NO VERDICT: {self.detail}"
        why = f"{self.violated} violated" if self.violated else "no step of the model"
        action = MODEL_ACTIONS.get(self.act, self.act)
        return (
            f"rejected: {why} at step {self.step} of {self.steps}: {self.act} [{action}] "
            f"{self.event}"
        )


def _tla_step(step: ProtocolStep) -> str:
    call = step.call
    keys = ", ".join(tla_string(k) for k in step.keys)
    return (
        f"[act |-> {tla_string(step.act)}, key |-> {tla_string(step.key)}, "
        f"keys |-> {{{keys}}}, flag |-> {'TRUE' if step.flag else 'FALSE'}, "
        f"op |-> {tla_string(call.op if call else '')}, "
        f"result |-> {tla_string(call.result if call else '')}, "
        f"n |-> {(call.n_blocks or 0) if call else 0}, "
        f"post |-> {tla_post(step.post, frozenset(), ())}]"
    )


def trace_keys(steps: Sequence[ProtocolStep]) -> list[str]:
    """Every item the steps name, sorted. O(steps)."""
    keys = {s.key for s in steps if s.key} | {k for s in steps for k in s.keys}
    return sorted(keys) or ["none"]


def trace_data(record: ProtocolRecord, checks: Sequence[str] = CHECKS) -> tuple[str, str]:
    """The text of module ``ProtocolTraceData`` for ``record`` and the config that checks
    ``EmbeddingCacheProtocolTrace`` with it: the pool, the items and their sizes, the
    order, the roles, and ``checks`` (of ``CHECKS``; by default all of them).
    O(steps x state size).

    Raises:
        ValueError: an unknown order, role or check, or an item without a size.
    """
    if record.order not in ORDERS or record.role not in ROLES:
        raise ValueError(f"order {record.order!r} / role {record.role!r}: not the model's")
    if not set(checks) <= set(CHECKS):
        raise ValueError(f"unknown checks {sorted(set(checks) - set(CHECKS))}")
    keys = trace_keys(record.steps)
    missing = [k for k in keys if k not in record.need and k != "none"]
    if missing:
        raise ValueError(f"no size for the items {missing}")
    need = " @@ ".join(f"{tla_string(k)} :> {record.need.get(k, 1)}" for k in keys)
    steps = ",\n    ".join(_tla_step(step) for step in record.steps)
    module = (
        f"---- MODULE {PROTOCOL_TRACE_DATA} ----\nEXTENDS Integers, TLC\n"
        f"TraceKeys == {{{', '.join(tla_string(k) for k in keys)}}}\n"
        f"TraceNeed == ({need})\n"
        f"ProtocolTrace == <<\n    {steps}\n>>\n====\n"
    )
    return module, _config(record, keys, checks)


def tla_bool(value: bool) -> str:
    """``value`` as TLA+ writes it."""
    return "TRUE" if value else "FALSE"


def _config(record: ProtocolRecord, keys: Sequence[str], checks: Sequence[str]) -> str:
    """The trace config of ``trace_data``: the constants, the spec, ``checks``."""
    items = max([1] + [len(s.keys) for s in record.steps if s.act == "check"])
    pins = max([1] + [e.pins for s in record.steps for _, e in s.post.entries])
    roles = ", ".join(tla_string(r) for r in ROLES[record.role])
    config = (
        "CONSTANTS\n"
        "    Keys <- TraceKeys\n"
        "    Need <- TraceNeed\n"
        f"    N = {record.num_blocks}\n"
        '    Level = "counts"\n'
        f"    MaxPins = {pins}\n"
        f"    Roles = {{{roles}}}\n"
        f"    MaxItems = {min(items, len(keys))}\n"
        f"    Order = {tla_string(record.order)}\n"
        f"    GpuCache = {tla_bool(record.gpu_cache)}\n"
        f"    KeepRule = {tla_bool(record.gpu_cache and record.order == 'safe')}\n"
        "SPECIFICATION ProtocolTraceSpec\n"
        f"INVARIANTS TraceProgress {' '.join(c for c in checks if c in INVARIANTS)}\n"
    )
    if properties := [c for c in checks if c in PROPERTIES]:
        config += f"PROPERTIES {' '.join(properties)}\n"
    return config


def _matched(raw_output: str) -> int:
    """The most steps the trace matched, from the lines ``TraceProgress`` printed."""
    found = patterns.TRACE_PROGRESS.finditer(raw_output)
    return max([0] + [int(m.group("matched")) for m in found])


def verdict(record: ProtocolRecord, run: TlcRun) -> ProtocolVerdict:
    """The verdict TLC's run gives ``record``. O(output)."""
    steps, output = record.steps, run.output
    total = len(steps)

    def at(step: int, violated: str | None) -> ProtocolVerdict:
        s = steps[step - 1] if 0 < step <= total else None
        event, act = (s.event, s.act) if s else ("(the initial state)", "Init")
        return ProtocolVerdict(total, False, violated, step, event, act, run.seconds)

    if output.outcome in (TlcOutcome.INVARIANT, TlcOutcome.ACTION_PROPERTY) and output.trace:
        last = output.trace[-1].state.get("i", "0")
        return at(int(last), output.violated)
    if output.outcome is TlcOutcome.PASS and run.exit_code == 0:
        matched = _matched(run.raw_output)
        if matched == total:
            return ProtocolVerdict(total, True, None, None, "", "", run.seconds)
        return at(matched + 1, None)
    why = "timed out" if run.timed_out else f"TLC failed ({output.outcome})"
    tail = "\n".join(run.raw_output.strip().splitlines()[-15:])
    return ProtocolVerdict(total, False, None, None, "", "", run.seconds, f"{why}:\n{tail}")


def validate_protocol(
    record: ProtocolRecord,
    tla_dir: Path,
    timeout: float = 300.0,
    checks: Sequence[str] = CHECKS,
) -> ProtocolVerdict:
    """Check ``record`` against the protocol model with TLC (one run, one worker),
    with ``checks`` (default: every one of ``CHECKS``). O(TLC on one path of the
    trace's length).

    Raises:
        ValueError: as ``trace_data``.
    """
    module, config = trace_data(record, checks)
    with tempfile.TemporaryDirectory(prefix="ec-protocol-trace-") as tmp:
        work = Path(tmp)
        copy_modules(tla_dir, work, (PROTOCOL_TRACE_DATA,))
        (work / f"{PROTOCOL_TRACE_DATA}.tla").write_text(module)
        (work / f"{PROTOCOL_TRACE_SPEC}.cfg").write_text(config)
        run = run_tlc(
            f"{PROTOCOL_TRACE_SPEC}.tla",
            f"{PROTOCOL_TRACE_SPEC}.cfg",
            work,
            workers=1,
            check_deadlock=False,  # a trace the model cannot follow just ends
            timeout=timeout,
            label="protocol-trace",
            quick_start=True,
        )
    return verdict(record, run)
