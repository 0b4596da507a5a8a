"""``VerifiedECCPUConnector``: the class vLLM loads, by name, from this module.

```
vllm serve <model> --ec-transfer-config '{"ec_connector": "VerifiedECCPUConnector",
  "ec_connector_module_path": "embedding_cache_vllm.connector", "ec_role": "ec_both",
  "ec_connector_extra_config": {"ec_cpu_bytes": 8589934592,
                                "embedding_cache": {"eviction": "gdsf"}}}'
```

vLLM's ``ECCPUConnector`` whose scheduler side is ``VerifiedECCPUScheduler``
(the project's ``EmbeddingCache``, leases at the check); its worker side is
vLLM's, unchanged. What the plugin overrides in vLLM, method by method, what
upstream does and why: docs/VLLM.md (the one place it is written down).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vllm.distributed.ec_transfer.ec_connector.base import ECConnectorRole
from vllm.distributed.ec_transfer.ec_connector.cpu.connector import ECCPUConnector

from .scheduler import VerifiedECCPUScheduler
from .version import require_supported_vllm

if TYPE_CHECKING:
    from vllm.config import VllmConfig

__all__ = ["VerifiedECCPUConnector", "VerifiedECCPUScheduler"]


class VerifiedECCPUConnector(ECCPUConnector):
    """vLLM's CPU EC connector with the verified cache on its scheduler side."""

    def __init__(self, vllm_config: VllmConfig, role: ECConnectorRole) -> None:
        require_supported_vllm()
        super().__init__(vllm_config, role)

    def _make_scheduler(self, vllm_config: VllmConfig) -> VerifiedECCPUScheduler:
        return VerifiedECCPUScheduler(vllm_config)
