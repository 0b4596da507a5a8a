"""The real-scheduler harness: vLLM 0.33's own ``ECCPUScheduler``, driven without a GPU.

The engine (``run``) makes the scheduler's calls in vLLM's order on a seeded
request stream (``stream``), with a chosen cache inside (``choice``: upstream's
class, the project's in its place, or the plugin ``embedding_cache_vllm``), a
modelled worker (``worker``: saves only what was computed, loads what it is
told, reports a step later, faults on request), and counts what leaks
(``result``). vLLM's config, region and requests are stubbed as little as the
scheduler allows (``stubs``, ``requests``). A run may record its events
(``events``) and its cache's calls (``tracing``) for trace validation.

- ``stubs`` -- the ``VllmConfig`` fields the scheduler reads, a real
  ``ECTransferConfig``, the fake shared region; ``require_vllm``.
- ``requests`` -- requests carrying vLLM's ``MultiModalFeatureSpec`` items.
- ``stream`` -- the seeded request stream (Zipf reuse, 64-2,048-row items).
- ``choice`` -- which cache runs inside the scheduler, and how it gets there.
- ``plugin`` -- the plugin's scheduler as the harness builds it (traced or not).
- ``worker`` -- what the worker makes and reports; the faults; the block check.
- ``events`` -- the typed event records.
- ``result`` -- the counters, the per-step records of the meta, the end state.
- ``run`` -- the engine and ``run(spec)``.

vLLM is imported when a run starts (its cost: docs/MEASURED.md, "Commands' run
times"), not on import.
"""

from __future__ import annotations

from .choice import KINDS, CacheChoice
from .result import Counters, EndState, StepRecord, first_difference
from .run import Engine, EngineSpec, FakeClock, RunResult, run
from .stream import StreamSpec
from .stubs import INSTALL_COMMAND, Settings, VllmMissingError, require_vllm
from .worker import Faults

__all__ = [
    "INSTALL_COMMAND",
    "KINDS",
    "CacheChoice",
    "Counters",
    "EndState",
    "Engine",
    "EngineSpec",
    "FakeClock",
    "Faults",
    "RunResult",
    "Settings",
    "StepRecord",
    "StreamSpec",
    "VllmMissingError",
    "first_difference",
    "require_vllm",
    "run",
]
