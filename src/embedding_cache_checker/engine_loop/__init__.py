"""vLLM 0.33's real engine loop, the plugin's ground truth: the engine-core
``Scheduler`` and ``AsyncScheduler`` on CPU, unpatched, with a worker that follows
the V2 model runner.

``engine`` builds vLLM's own scheduler (its KV cache manager, GPU encoder cache
manager, multimodal budget and queues) from a tiny LLaVA written at run time
(``model_dir``: no hub, no weights), its EC connector made by vLLM's factory:
upstream's ``ECCPUConnector``, the plugin, or a planted plugin (``planted``).
``loop`` steps it in the engine core's order (``EngineCore.step``, or
``step_with_batch_queue`` for the async scheduler), feeding a seeded stream
(``stream``) and running each output on ``worker``; ``recorder`` counts the
connector's calls. ``figures`` holds the runs the tests and the bench measure.

- ``model_dir`` -- the local model directory (config, tokenizer, processor).
- ``engine`` -- ``EngineSettings`` and ``build_scheduler``; ``CONNECTORS``.
- ``stream`` -- the seeded request stream and hand-written requests.
- ``worker`` -- the V2 worker's encoder cache, copies and reports, each rule
  with its source in vLLM; the block check.
- ``recorder`` -- the connector's calls counted: checks, hits, lost hits, saves.
- ``loop`` -- ``EngineLoop`` and ``run``: the engine core's loop, the end state.
- ``planted`` -- the plugin with one rule put back, for the tests to catch.
- ``figures`` -- the settings and streams of the measured runs.

``embedding_cache_checker.engine`` is older: a hand-written model of the
scheduler's order of calls around the connector (no GPU encoder cache, no KV
cache, no chunked prefill), kept for its traces (``tlc --engine-trace``); this
package is the loop the plugin's claims are measured on.
"""

from __future__ import annotations

from ..engine.stubs import INSTALL_COMMAND, VllmMissingError
from .engine import CONNECTORS, EngineSettings, require_vllm
from .loop import LoopEndState, LoopResult, LoopSpec, run
from .stream import ArrivalSpec, StepEvents, scripted
from .worker import WorkerFaults

__all__ = [
    "CONNECTORS",
    "INSTALL_COMMAND",
    "ArrivalSpec",
    "EngineSettings",
    "LoopEndState",
    "LoopResult",
    "LoopSpec",
    "StepEvents",
    "VllmMissingError",
    "WorkerFaults",
    "require_vllm",
    "run",
    "scripted",
]
