"""vLLM 0.33's engine-core scheduler, built on CPU from the local model directory.

``build_scheduler`` makes a real ``Scheduler`` or ``AsyncScheduler`` (vLLM's own
classes, unpatched) with its real ``KVCacheManager``, ``EncoderCacheManager``,
``MultiModalBudget`` and request queues; its EC connector is made by vLLM's own
``ECConnectorFactory`` from ``ec_transfer_config``: upstream's ``ECCPUConnector``
or the plugin ``VerifiedECCPUConnector``, each over a real shared region of
``ec_blocks`` rows. Settings, not patches, make this run without a GPU:

- ``VLLM_USE_V2_MODEL_RUNNER=1`` (the CPU connector refuses the V1 runner) and
  ``HF_HUB_OFFLINE=1``, set by ``prepare_environment`` before vLLM's import;
- ``DeviceConfig(device="cpu")``;
- ``ec_transfer_config.mm_encoder_output_widths``, set as the engine's start-up
  sets it (the producer measures it from the model);
- ``SchedulerConfig.encoder_cache_size`` and ``max_num_encoder_input_tokens``
  (vLLM sizes the GPU encoder cache and the compute budget as the larger of these
  and the model's largest item);
- ``cache_config.num_gpu_blocks`` and a ``KVCacheConfig`` built by hand, as
  vLLM's own scheduler tests build it (one full-attention group);
- ``parallel_config.tensor_parallel_size`` with the ``mp`` backend: how many
  ranks report each load.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from embedding_cache_vllm.version import SUPPORTED_VLLM_VERSION

from ..engine.stubs import INSTALL_COMMAND, VllmMissingError
from .model_dir import HIDDEN, write_model_dir

if TYPE_CHECKING:
    from vllm.config import VllmConfig
    from vllm.v1.core.sched.scheduler import Scheduler

#: Tokens per KV block (vLLM's default block size).
KV_BLOCK_TOKENS = 16
#: Bytes per EC row: the encoder output's width in float16.
ROW_BYTES = HIDDEN * 2
#: The connectors by name: vLLM's factory loads ``(ec_connector, module path)``.
#: The planted ones are the plugin with one rule put back (``planted``).
CONNECTORS: dict[str, tuple[str, str | None]] = {
    "upstream": ("ECCPUConnector", None),
    "plugin": ("VerifiedECCPUConnector", "embedding_cache_vllm.connector"),
    "plugin-no-keep-rule": ("NoKeepRuleConnector", "embedding_cache_checker.engine_loop.planted"),
    "plugin-early-release": (
        "EarlyReleaseConnector",
        "embedding_cache_checker.engine_loop.planted",
    ),
    "vllm-traced": ("TracedVllmConnector", "embedding_cache_checker.engine_loop.traced"),
    "plugin-traced": ("TracedPluginConnector", "embedding_cache_checker.engine_loop.traced"),
}


@dataclass(frozen=True)
class EngineSettings:
    """One engine instance: its pools, budgets, ranks, connector and scheduler class."""

    #: Rows of the EC pool (each row one block of ``ROW_BYTES``).
    ec_blocks: int = 16_384
    #: The GPU encoder cache, in embeddings (``SchedulerConfig.encoder_cache_size``).
    encoder_cache_size: int = 4_096
    #: The encoder compute budget per step (``max_num_encoder_input_tokens``).
    encoder_compute_budget: int = 4_096
    max_num_batched_tokens: int = 4_096
    max_num_seqs: int = 16
    #: KV blocks of ``KV_BLOCK_TOKENS`` tokens: fewer than the running requests
    #: need makes the scheduler preempt.
    kv_blocks: int = 1_024
    max_model_len: int = 16_384
    #: Ranks that report each load (``tensor_parallel_size``, the ``mp`` backend).
    ranks: int = 1
    #: ``ec_transfer_config.ec_role``.
    role: str = "ec_both"
    #: A key of ``CONNECTORS``.
    connector: str = "plugin"
    #: ``ec_connector_extra_config["embedding_cache"]`` (the plugin's options).
    cache_options: tuple[tuple[str, Any], ...] = ()
    #: ``AsyncScheduler`` driven in the engine core's batch-queue order (vLLM's
    #: default with the V2 runner), else ``Scheduler`` in ``EngineCore.step``'s.
    async_scheduling: bool = True
    #: ``SchedulerConfig.policy``: "fcfs" or "priority".
    policy: str = "fcfs"
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


def prepare_environment() -> None:
    """The two variables vLLM reads at import: the V2 runner, no hub."""
    os.environ.setdefault("VLLM_USE_V2_MODEL_RUNNER", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


def require_vllm() -> None:
    """Import vLLM's scheduler (seconds, the first time), or raise
    ``VllmMissingError`` naming ``INSTALL_COMMAND``."""
    prepare_environment()
    try:
        import vllm.v1.core.sched.async_scheduler  # noqa: F401
    except ImportError as error:
        raise VllmMissingError(
            f"the real engine loop needs vLLM {SUPPORTED_VLLM_VERSION}: {error}; "
            f"install it: {INSTALL_COMMAND}"
        ) from error


def vllm_config(settings: EngineSettings, model_dir: Path) -> VllmConfig:
    """The ``VllmConfig`` of ``settings`` over the model in ``model_dir``."""
    from vllm.config import (
        CacheConfig,
        DeviceConfig,
        ECTransferConfig,
        ModelConfig,
        ParallelConfig,
        SchedulerConfig,
        VllmConfig,
    )

    if settings.connector not in CONNECTORS:
        raise ValueError(f"unknown connector {settings.connector!r}; use {sorted(CONNECTORS)}")
    name, module = CONNECTORS[settings.connector]
    extra: dict[str, Any] = {"ec_cpu_bytes": settings.ec_blocks * ROW_BYTES}
    if settings.cache_options:
        extra["embedding_cache"] = dict(settings.cache_options)
    transfer = ECTransferConfig(
        ec_connector=name,
        ec_connector_module_path=module,
        ec_role=settings.role,  # type: ignore[arg-type]
        ec_connector_extra_config=extra,
    )
    transfer.mm_encoder_output_widths = {"image": HIDDEN}
    model = ModelConfig(
        model=str(model_dir), dtype="float16", max_model_len=settings.max_model_len, seed=0
    )
    scheduler = SchedulerConfig(
        max_num_batched_tokens=settings.max_num_batched_tokens,
        max_num_seqs=settings.max_num_seqs,
        max_model_len=settings.max_model_len,
        is_encoder_decoder=False,
        async_scheduling=settings.async_scheduling,
        policy=settings.policy,  # type: ignore[arg-type]
    )
    scheduler.encoder_cache_size = settings.encoder_cache_size
    scheduler.max_num_encoder_input_tokens = settings.encoder_compute_budget
    cache = CacheConfig(block_size=KV_BLOCK_TOKENS)
    cache.num_gpu_blocks = settings.kv_blocks
    config = VllmConfig(
        model_config=model,
        scheduler_config=scheduler,
        cache_config=cache,
        parallel_config=ParallelConfig(),
        device_config=DeviceConfig(device="cpu"),
        ec_transfer_config=transfer,
    )
    # After VllmConfig's checks, which would look for that many devices.
    config.parallel_config.tensor_parallel_size = settings.ranks
    config.parallel_config.distributed_executor_backend = "mp"
    return config


def build_scheduler(settings: EngineSettings, model_dir: Path) -> Scheduler:
    """vLLM's ``AsyncScheduler`` (or ``Scheduler``) for ``settings``; its EC connector
    made by vLLM's factory. The model directory is written if missing."""
    require_vllm()
    import torch
    from vllm.v1.core.sched.async_scheduler import AsyncScheduler
    from vllm.v1.core.sched.scheduler import Scheduler
    from vllm.v1.kv_cache_interface import FullAttentionSpec, KVCacheConfig, KVCacheGroupSpec
    from vllm.v1.structured_output import StructuredOutputManager

    config = vllm_config(settings, write_model_dir(model_dir))
    spec = FullAttentionSpec(
        block_size=KV_BLOCK_TOKENS, num_kv_heads=1, head_size=16, dtype=torch.float16
    )
    kv = KVCacheConfig(
        num_blocks=settings.kv_blocks,
        kv_cache_tensors=[],
        kv_cache_groups=[KVCacheGroupSpec(["layer.0"], spec)],
    )
    cls = AsyncScheduler if settings.async_scheduling else Scheduler
    return cls(
        config, kv, StructuredOutputManager(config), block_size=KV_BLOCK_TOKENS, log_stats=True
    )
