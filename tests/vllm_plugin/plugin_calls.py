"""What the plugin's tests share: a scheduler of a chosen kind, requests, reports.

Everything here imports vLLM when called, not on import, and first asks
``require_vllm``: without vLLM 0.33.0 a test FAILS naming the install command
(it never skips).
"""

from __future__ import annotations

from typing import Any

from embedding_cache_checker.engine import CacheChoice, FakeClock, Settings, require_vllm
from embedding_cache_checker.engine.choice import build
from embedding_cache_checker.engine.requests import make_request


def scheduler(
    kind: str = "plugin",
    num_blocks: int = 16,
    options: tuple[tuple[str, Any], ...] = (),
    clock: FakeClock | None = None,
    **settings: Any,
) -> Any:
    """A scheduler of ``kind`` (``engine.choice``) over ``num_blocks`` blocks."""
    require_vllm()
    return build(
        CacheChoice(kind, options),
        Settings(num_blocks=num_blocks, **settings),
        clock or FakeClock(),
    ).scheduler


def request(request_id: str, *items: tuple[str, int]) -> Any:
    """A request of ``items`` ((key, rows) each)."""
    return make_request(request_id, tuple(items))


def report(saves: list[str] = [], loads: list[int] = []) -> Any:  # noqa: B006 (never mutated)
    """The ``ECConnectorOutput`` of a worker report."""
    from vllm.distributed.ec_transfer.ec_connector.cpu.common import ECCPUWorkerMetadata
    from vllm.v1.outputs import ECConnectorOutput

    meta = ECCPUWorkerMetadata(completed_saves=list(saves), completed_loads=list(loads))
    return ECConnectorOutput(ec_connector_worker_meta=meta)


def save(sched: Any, key: str, rows: int) -> None:
    """Compute ``key`` in one step and report its save: it is then cached and ready."""
    sched.update_state_after_alloc(request(f"save-{key}", (key, rows)), 0)
    meta = sched.build_connector_meta(None)
    assert list(meta.saves) == [key]
    sched.update_connector_output(report(saves=[key]))
