"""vLLM's EC scheduler without a GPU, a model or a shared-memory region.

``ECCPUScheduler`` reads little of ``VllmConfig``: the EC transfer config (a real
``ECTransferConfig``, built offline), the model's dtype, the parallel sizes, and
the encoder output width per modality. A real ``VllmConfig`` needs a model
(downloaded), so ``vllm_config`` builds a ``SimpleNamespace`` with just those
fields. The width is set where vLLM's producer start-up measures it
(``ECTransferConfig.mm_encoder_output_widths``), so vLLM's own
``get_encoder_output_width`` runs. Only the shared mmap region is stubbed, as
vLLM's unit tests do: ``create_ec_shared_region`` is patched, for the
construction only, to return a ``FakeRegion`` (``num_blocks``,
``block_size_bytes``, ``cleanup()``). A block holds one row of the encoder
output (``block_size_bytes`` = width x the dtype's size), so an item of ``rows``
rows takes ``rows`` blocks.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast
from unittest import mock

from embedding_cache_vllm.version import SUPPORTED_VLLM_VERSION

if TYPE_CHECKING:
    from vllm.config import VllmConfig

#: How to install what the harness drives.
INSTALL_COMMAND = f"pip install -e '.[vllm]'  (vllm=={SUPPORTED_VLLM_VERSION}, with torch)"
#: The module whose name ``create_ec_shared_region`` the scheduler calls.
SCHEDULER_MODULE = "vllm.distributed.ec_transfer.ec_connector.cpu.scheduler"
#: The modality of every item, and the encoder output width (= the model's hidden size).
MODALITY = "image"
WIDTH = 16


class VllmMissingError(RuntimeError):
    """vLLM (or torch) cannot be imported; the message names the install command."""


def require_vllm() -> None:
    """Import vLLM's EC scheduler (slow the first time: docs/MEASURED.md, "Commands'
    run times"), or raise ``VllmMissingError`` naming ``INSTALL_COMMAND``."""
    try:
        import vllm.distributed.ec_transfer.ec_connector.cpu.scheduler  # noqa: F401
    except ImportError as error:
        raise VllmMissingError(
            f"the real-scheduler harness needs vLLM {SUPPORTED_VLLM_VERSION}: {error}; "
            f"install it: {INSTALL_COMMAND}"
        ) from error


@dataclass
class FakeRegion:
    """The shared region as the scheduler uses it: a size, a block size, a cleanup."""

    num_blocks: int
    block_size_bytes: int
    cleaned: bool = False

    def cleanup(self) -> None:
        self.cleaned = True


@dataclass(frozen=True)
class Settings:
    """The engine instance: its pool, role, parallel ranks and connector options."""

    num_blocks: int = 16_384
    #: ``ECTransferConfig.ec_role``: "ec_both", "ec_producer" or "ec_consumer".
    role: str = "ec_both"
    #: Ranks that report each load (``tensor_parallel_size`` under the "mp" backend).
    ranks: int = 1
    #: ``ec_connector_extra_config["embedding_cache"]`` (the plugin's options).
    cache_options: tuple[tuple[str, Any], ...] = ()
    connector: str = "ECCPUConnector"
    module_path: str | None = None


def dtype() -> Any:
    """The model dtype (torch.float16)."""
    import torch

    return torch.float16


def ec_transfer_config(settings: Settings) -> Any:
    """A real ``ECTransferConfig`` for ``settings``, with the encoder width measured."""
    from vllm.config import ECTransferConfig

    extra: dict[str, Any] = {"ec_cpu_bytes": settings.num_blocks * block_size_bytes()}
    if settings.cache_options:
        extra["embedding_cache"] = dict(settings.cache_options)
    config = ECTransferConfig(
        ec_connector=settings.connector,
        ec_connector_module_path=settings.module_path,
        ec_role=cast(Any, settings.role),
        ec_connector_extra_config=extra,
    )
    config.mm_encoder_output_widths = {MODALITY: WIDTH}
    return config


def block_size_bytes() -> int:
    """One row of the encoder output: ``WIDTH`` x the dtype's size."""
    return WIDTH * int(dtype().itemsize)


def vllm_config(settings: Settings) -> VllmConfig:
    """The fields of ``VllmConfig`` the EC connector and scheduler read."""
    model = SimpleNamespace(dtype=dtype(), model="stub-model", get_inputs_embeds_size=lambda: WIDTH)
    parallel = SimpleNamespace(
        tensor_parallel_size=settings.ranks,
        prefill_context_parallel_size=1,
        distributed_executor_backend="mp",
        data_parallel_index=0,
    )
    config = SimpleNamespace(
        ec_transfer_config=ec_transfer_config(settings),
        model_config=model,
        parallel_config=parallel,
        use_v2_model_runner=True,
        instance_id="stub",
    )
    return cast("VllmConfig", config)


@contextlib.contextmanager
def fake_region() -> Iterator[list[FakeRegion]]:
    """While open, the scheduler's ``create_ec_shared_region`` returns a ``FakeRegion``
    sized from the config's ``ec_cpu_bytes``; yields the regions made."""
    made: list[FakeRegion] = []

    def create(config: Any) -> FakeRegion:
        cpu_bytes = int(config.ec_transfer_config.ec_connector_extra_config["ec_cpu_bytes"])
        region = FakeRegion(cpu_bytes // block_size_bytes(), block_size_bytes())
        made.append(region)
        return region

    with mock.patch(f"{SCHEDULER_MODULE}.create_ec_shared_region", create):
        yield made
