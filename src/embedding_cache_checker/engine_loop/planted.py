"""Planted plugins for the real loop: the plugin with one of its rules put back.

vLLM's factory loads a connector by class name from a module path, so each planted
bug is a connector class here (``CONNECTORS`` in ``engine`` names them), each
showing that a real-loop test catches the rule's absence:

- ``NoKeepRuleConnector``: the plugin without the worker-keeps rule
  (``VerifiedECCPUScheduler._reconcile_saves`` and ``worker_keeps``): it dispatches
  a save for an item the worker keeps on the GPU, which the worker never makes.
- ``EarlyReleaseConnector``: the plugin releasing a load's lease at the first
  rank's report, while the other ranks may still read its blocks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vllm.distributed.ec_transfer.ec_connector.cpu.common import ECCPUWorkerMetadata

from embedding_cache_vllm.connector import VerifiedECCPUConnector
from embedding_cache_vllm.scheduler import VerifiedECCPUScheduler

if TYPE_CHECKING:
    from vllm.config import VllmConfig
    from vllm.v1.core.sched.output import SchedulerOutput
    from vllm.v1.outputs import ECConnectorOutput


class NoKeepRuleScheduler(VerifiedECCPUScheduler):
    """The plugin, but no mirror of the worker's encoder cache: every computed item
    is allocated and its save dispatched, as before the fix."""

    def _reconcile_saves(self, scheduler_output: SchedulerOutput | None) -> set[str] | None:
        super()._reconcile_saves(None)  # forgets the step's inputs, checks nothing
        return None


class EarlyReleaseScheduler(VerifiedECCPUScheduler):
    """The plugin, but a load's lease ends at the first rank's report."""

    def update_connector_output(self, connector_output: ECConnectorOutput) -> None:
        meta = connector_output.ec_connector_worker_meta
        if isinstance(meta, ECCPUWorkerMetadata):
            for transfer_id in meta.completed_loads:
                pending = self._lease_loads.get(transfer_id)
                if pending is not None:  # the planted bug: as if the last rank reported
                    self._lease_loads[transfer_id] = (pending[0], 1)
        super().update_connector_output(connector_output)


class NoKeepRuleConnector(VerifiedECCPUConnector):
    def _make_scheduler(self, vllm_config: VllmConfig) -> VerifiedECCPUScheduler:
        return NoKeepRuleScheduler(vllm_config)


class EarlyReleaseConnector(VerifiedECCPUConnector):
    def _make_scheduler(self, vllm_config: VllmConfig) -> VerifiedECCPUScheduler:
        return EarlyReleaseScheduler(vllm_config)
