"""The planted schedulers of ``planted``: the plugin's scheduler with one override broken.

Each subclasses the harness's ``TracedPluginScheduler`` (traced or not, as the choice
says); ``planted`` names them and says what each breaks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .plugin import TracedPluginScheduler

if TYPE_CHECKING:
    from vllm.distributed.ec_transfer.ec_connector.cpu.common import ECCPUConnectorMetadata
    from vllm.v1.core.sched.output import SchedulerOutput
    from vllm.v1.request import Request


class SaveForHit(TracedPluginScheduler):
    """The plugin, but a checked hit's update also dispatches a save of the hit."""

    def update_state_after_alloc(self, request: Request, index: int) -> None:
        key = request.mm_features[index].identifier
        lease = self._check_leases.get(key)
        super().update_state_after_alloc(request, index)
        if lease is not None:  # the planted bug: the hit is saved as if computed
            self._pending_saves[key] = list(lease.block_ids)


class EarlyRelease(TracedPluginScheduler):
    """The plugin, but each load's lease is released with the step's meta."""

    def build_connector_meta(self, scheduler_output: SchedulerOutput) -> ECCPUConnectorMetadata:
        meta = super().build_connector_meta(scheduler_output)
        for lease, _ in self._lease_loads.values():
            lease.release()  # the planted bug: before the worker reports the load
        return meta


#: The planted schedulers by name (``planted.PLANTED``'s names).
CLASSES: dict[str, type[TracedPluginScheduler]] = {
    "save-for-hit": SaveForHit,
    "early-release": EarlyRelease,
}
