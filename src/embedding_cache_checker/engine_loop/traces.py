"""The real loop's engine traces: runs recorded for TLC's two checks (``verify.engine_traces``).

The engine of a trace is small, for TLC: a 16-block EC pool (the cache's trace spec
takes an alloc's blocks as any subset of the pool), items of 1 to 4 rows from 12
keys, a GPU encoder cache of 6 embeddings (items are evicted from it and
re-allocated), one running request (``max_num_seqs=1``: the protocol model's step
is one request, and the plugin releases an unscheduled request's check leases when
the pass's metadata is built), 16-token steps (prompts are prefilled in chunks, a
request's items checked over several passes), 30 steps of arrivals. The connector
is traced (``traced``): vLLM's ``ECCPUScheduler`` on the project's cache, or the
plugin; the clock moves one second per engine step.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ..engine.stream import catalogue
from .engine import EngineSettings
from .loop import LoopResult, LoopSpec, run
from .stream import ArrivalSpec, StepEvents, scripted
from .worker import WorkerFaults

#: The engine of the traces (its connector set per run).
TRACE_SETTINGS = EngineSettings(
    ec_blocks=16,
    encoder_cache_size=10,
    encoder_compute_budget=8,
    max_num_batched_tokens=16,
    max_num_seqs=1,
    kv_blocks=64,
    max_model_len=256,
)
#: The stream of the traces.
TRACE_STREAM = ArrivalSpec(
    steps=30,
    catalogue=12,
    rows=(1, 4),
    arrivals=(0, 1),
    items=(1, 3),
    repeat=0.0,
    text=(1, 4),
    max_tokens=(1, 2),
    abort=0.0,
)
#: The GPU encoder cache's leak, written by hand for the same small engine (a GPU
#: encoder cache of 20 embeddings, a compute budget of 16): A computes X (2 rows), B
#: W (12), V V (4): V's alloc evicts X from the EC pool, while the GPU encoder cache
#: still holds it. Then D asks for Z (3 rows) and X: Z's GPU allocation evicts X,
#: X's check misses the EC pool, and X is allocated as computed in the same pass:
#: the worker keeps X's tensor, never encodes it, never makes its save.
LEAK_SETTINGS = dataclasses.replace(
    TRACE_SETTINGS, encoder_cache_size=20, encoder_compute_budget=16
)
LEAK_SCRIPT = (
    StepEvents((scripted("A", [("X", 2)]),), None),
    StepEvents((scripted("B", [("W", 12)]),), None),
    StepEvents((scripted("V", [("V", 4)]),), None),
    StepEvents((scripted("D", [("Z", 3), ("X", 2)]),), None),
)
LEAK_NEED = {"X": 2, "W": 12, "V": 4, "Z": 3}

#: Each real-loop scheduler: its traced connector, the model's order, async or not.
LOOP_SCHEDULERS: dict[str, tuple[str, str, bool]] = {
    "loop-vllm": ("vllm-traced", "vllm", True),
    "loop-plugin": ("plugin-traced", "safe", True),
    "loop-vllm-sync": ("vllm-traced", "vllm", False),
    "loop-plugin-sync": ("plugin-traced", "safe", False),
}


def record_loop(
    name: str, model_dir: Path, stream: ArrivalSpec = TRACE_STREAM, leak: bool = False
) -> tuple[LoopResult, dict[str, int], EngineSettings]:
    """Run real-loop scheduler ``name`` on ``stream`` (``leak``: on ``LEAK_SCRIPT``),
    recording; returns the run, each item's size in blocks, and the engine's settings.
    O(stream x pool)."""
    connector, _order, async_scheduling = LOOP_SCHEDULERS[name]
    base = LEAK_SETTINGS if leak else TRACE_SETTINGS
    settings = dataclasses.replace(base, connector=connector, async_scheduling=async_scheduling)
    spec = LoopSpec(settings, stream, WorkerFaults(), idle_limit=200, record_events=True)
    if leak:
        return run(spec, model_dir, LEAK_SCRIPT), dict(LEAK_NEED), settings
    keys, rows, _ = catalogue(stream)
    return run(spec, model_dir), dict(zip(keys, rows, strict=True)), settings
