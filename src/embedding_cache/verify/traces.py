"""Trace validation (conformance link 2): check a recorded trace against the spec with TLC.

A trace from ``TracedEmbeddingCache`` is written into a generated module
``TraceData`` as the definition ``Trace`` and checked by
``tla/EmbeddingCacheTrace.tla``, which extends it: TLC follows the single path
the trace allows and reports a deadlock at the first step the spec cannot
take. (This TLC build has no Json/IOUtils modules, so the trace travels as
TLA+ text. It is a definition in an extended module, not a CONSTANT bound
with ``<-``: TLC evaluates such a definition once, but re-evaluates a
substituted constant at every reference, which made checking quadratic in
the trace's length: 79 s for 1,200 steps, against 3 s now.)
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..abstraction import AbstractState
from ..tlc.jar import locate_jar, locate_java
from ..tracing import TraceStep

#: The TLA+ modules a trace check needs, from the project's tla/ directory.
TRACE_MODULES = ("EmbeddingCache.tla", "EmbeddingCacheTrace.tla")
#: The root module TLC checks, and the generated module it extends.
TRACE_SPEC, TRACE_DATA = "EmbeddingCacheTrace", "TraceData"


@dataclass
class TraceVerdict:
    """TLC's verdict on one trace."""

    steps: int
    accepted: bool
    matched: int  # steps the spec accepted before the first it could not take
    first_rejected: TraceStep | None
    seconds: float
    detail: str = ""


def tla_string(text: str) -> str:
    """A TLA+ string literal for ``text`` (backslash, quote and control escapes)."""
    escaped = (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
        .replace("\f", "\\f")
    )
    return f'"{escaped}"'


def _tla_post(post: AbstractState) -> str:
    if post.entries:
        entries = " @@ ".join(
            f"{tla_string(k)} :> [pins |-> {e.pins}, blocks |-> {e.blocks}]"
            for k, e in post.entries
        )
        entries = f"({entries})"
    else:
        entries = "<<>>"
    queue = ", ".join(tla_string(k) for k in post.queue)
    held = "TRUE" if post.held else "FALSE"
    return f"[entries |-> {entries}, queue |-> <<{queue}>>, free |-> {post.free}, held |-> {held}]"


def _tla_step(step: TraceStep) -> str:
    blocks = ", ".join(str(b) for b in step.block_ids or ())
    return (
        f"[op |-> {tla_string(step.op)}, key |-> {tla_string(step.key)}, "
        f"n |-> {step.n_blocks or 0}, result |-> {tla_string(step.result)}, "
        f"blocks |-> {{{blocks}}}, post |-> {_tla_post(step.post)}]"
    )


def trace_module(trace: Sequence[TraceStep], num_blocks: int) -> tuple[str, str]:
    """The text of module ``TraceData`` defining ``Trace`` and ``TraceKeys``, and the config
    that checks ``EmbeddingCacheTrace`` with it."""
    keys = sorted({step.key for step in trace}) or ["none"]
    max_pins = max([1] + [e.pins for step in trace for _, e in step.post.entries])
    steps = ",\n    ".join(_tla_step(step) for step in trace)
    module = (
        f"---- MODULE {TRACE_DATA} ----\n"
        "EXTENDS Integers, TLC\n"
        f"TraceKeys == {{{', '.join(tla_string(k) for k in keys)}}}\n"
        f"Trace == <<\n    {steps}\n    >>\n"
        "====\n"
    )
    config = (
        "CONSTANTS\n"
        f"    N = {num_blocks}\n"
        f"    MaxPins = {max_pins}\n"
        "    Keys <- TraceKeys\n"
        "SPECIFICATION TraceSpec\n"
        "INVARIANT TraceProgress\n"
    )
    return module, config


_DEADLOCK = re.compile(r"Error: Deadlock reached")
_I_VALUE = re.compile(r"^/\\ i = (\d+)\s*$", re.M)


def validate_trace(
    trace: Sequence[TraceStep],
    num_blocks: int,
    tla_dir: Path,
    timeout: float = 300.0,
) -> TraceVerdict:
    """Run TLC on ``trace``; accepted iff the spec can take every step in order."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ec-trace-") as tmp:
        work = Path(tmp)
        for module in TRACE_MODULES:
            shutil.copy(tla_dir / module, work / module)
        module_text, config_text = trace_module(trace, num_blocks)
        (work / f"{TRACE_DATA}.tla").write_text(module_text)
        (work / f"{TRACE_SPEC}.cfg").write_text(config_text)
        proc = subprocess.run(
            [
                str(locate_java()),
                "-XX:+UseParallelGC",
                "-cp",
                str(locate_jar()),
                "tlc2.TLC",
                "-workers",
                "1",
                "-metadir",
                str(work / "meta"),
                "-config",
                f"{TRACE_SPEC}.cfg",
                f"{TRACE_SPEC}.tla",
            ],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    seconds = time.monotonic() - start
    out = proc.stdout + proc.stderr
    if _DEADLOCK.search(out):
        values = _I_VALUE.findall(out)
        matched = int(values[-1]) if values else 0
        rejected = trace[matched] if matched < len(trace) else None
        return TraceVerdict(len(trace), False, matched, rejected, seconds, "deadlock")
    if proc.returncode == 0 and "Model checking completed. No error has been found." in out:
        return TraceVerdict(len(trace), True, len(trace), None, seconds)
    tail = "\n".join(out.strip().splitlines()[-15:])
    return TraceVerdict(len(trace), False, 0, None, seconds, f"TLC failed:\n{tail}")
