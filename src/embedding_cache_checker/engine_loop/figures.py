"""The real-loop runs the tests assert and the bench measures.

- ``MATRIX``: the engine and stream every policy x configuration is held to: a
  2,048-row EC pool behind a 2,048-embedding GPU encoder cache, 120 KV blocks
  (the scheduler preempts), 1,024-token steps (long prompts are prefilled in
  chunks), 2,000 steps of arrivals with aborts and repeated items.
- ``TWO_STEP``: the issue's two-step case, in which the GPU encoder cache's
  eviction and re-allocation in one pass makes a save the worker never performs.
- ``matrix_runs``: (label, settings) of upstream's connector and of the plugin
  under every ``engine.figures.plugin_options`` label, for one scheduler class.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..engine.figures import plugin_options
from .engine import EngineSettings
from .stream import ArrivalSpec, StepEvents, scripted

#: The engine of the matrix (its connector and options set per run).
MATRIX_SETTINGS = EngineSettings(
    ec_blocks=2_048,
    encoder_cache_size=2_048,
    encoder_compute_budget=1_024,
    max_num_batched_tokens=1_024,
    kv_blocks=120,
)
#: The stream of the matrix: 2,000 steps of arrivals, then the drain.
MATRIX_STREAM = ArrivalSpec(steps=2_000, arrivals=(0, 3))

#: The two-step case: EC pool 180 rows, GPU encoder cache 200, compute budget 512.
TWO_STEP_SETTINGS = EngineSettings(
    ec_blocks=180,
    encoder_cache_size=200,
    encoder_compute_budget=512,
    max_num_batched_tokens=1_024,
    kv_blocks=256,
)
#: Step 0: A (X, 20 rows) and B (W, 150); idle steps until both are saved, ready
#: and finished (the async scheduler applies a step's output one step late); then
#: C (Y, 160) and D (X) in one pass: C's allocation evicts X and W from the GPU
#: encoder cache and from the EC pool, and D's X is allocated again in both.
TWO_STEP_SCRIPT = (
    StepEvents((scripted("A", [("X", 20)]), scripted("B", [("W", 150)])), None),
    *[StepEvents((), None)] * 6,
    StepEvents((scripted("C", [("Y", 160)]), scripted("D", [("X", 20)])), None),
)


def matrix_runs(async_scheduling: bool) -> list[tuple[str, EngineSettings]]:
    """(label, settings): upstream's connector, then the plugin per label."""
    base = dataclasses.replace(MATRIX_SETTINGS, async_scheduling=async_scheduling)
    runs: list[tuple[str, EngineSettings]] = [
        ("upstream", dataclasses.replace(base, connector="upstream"))
    ]
    for label, options in plugin_options():
        runs.append((label, dataclasses.replace(base, connector="plugin", cache_options=options)))
    return runs


def counts(result: Any) -> dict[str, Any]:
    """A run's figures as plain values (for tables and JSON)."""
    c, w, e = result.connector, result.worker, result.end
    return {
        "checks": c.checks,
        "hits": c.hits,
        "lost": c.checked_hits_lost,
        "loads": c.loads,
        "saves": c.saves,
        "never_made": w.saves_never_made,
        "encoder_misses": w.encoder_misses,
        "reused_in_flight": w.reused_in_flight,
        "never_ready": e.never_ready,
        "held_blocks": e.held_blocks,
        "push_work": e.pending_push_work,
        "idle": e.went_idle,
        "preemptions": result.preemptions,
        "checked_not_scheduled": c.checked_not_scheduled,
        "updates": c.updates,
        "order_breaks": c.order_breaks,
        "frees": c.frees,
        "finished": c.finished,
        "ensure_calls": c.ensure_calls,
        "engine_steps": result.engine_steps,
    }
