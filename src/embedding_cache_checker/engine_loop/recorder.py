"""What the scheduler asks of its EC connector, counted as it happens.

``Recorder`` stands in the scheduler's ``ec_connector`` slot and hands every call
to the connector vLLM's factory made (upstream's or the plugin): it changes no
answer and no order. It counts the checks and their hits, and, per scheduling
pass, the checked hits vLLM then scheduled as loads (``update_state_after_alloc``
of an item whose check said True in the same pass): a checked hit whose load the
pass's metadata does not dispatch is lost (the worker then has no embeddings for
it). It also keeps every key a save was dispatched for, to read the cache's end
state through ``get``, and the stream of items vLLM scheduled through the
connector (``accesses``): the second-level stream the cache serves.

It also checks the order the older model of the scheduler (``engine.run``) assumes
against the real loop (``order_breaks``, 0 when the model's order holds): every
item vLLM updates in a pass was checked in that pass, and a request's computed
items are updated before its loaded ones.

Recording (``record``), it also keeps the engine's events (``engine.events``), in
the form the protocol trace check reads (``verify.protocol_steps``), beside the
traced cache's calls: each pass's checks under one request name (the real loop
records with one running request: ``traces``), the updates, an unscheduled pass,
the reports, the metadata's saves (``computed``: the worker encodes the item this
step, so it makes the save) and loads, the pass's end, and the worker's drops of
the GPU encoder cache (``GpuFreed``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..engine import events as ev

if TYPE_CHECKING:
    from ..tracing import TraceStep
    from .worker import V2Worker


@dataclass
class ConnectorCounts:
    """The connector's calls and their outcomes, over the run."""

    checks: int = 0
    hits: int = 0
    #: Checked hits scheduled as loads whose load the pass's metadata lacks.
    checked_hits_lost: int = 0
    loads: int = 0
    saves: int = 0
    saved_blocks: int = 0
    updates: int = 0
    frees: int = 0
    finished: int = 0
    ensure_calls: int = 0
    #: Checks made for a request that the pass did not schedule (no update).
    checked_not_scheduled: int = 0
    #: Updates out of the order ``engine.run`` models: unchecked in their pass, or a
    #: computed item after a loaded one of the same request.
    order_breaks: int = 0
    saved_keys: set[str] = field(default_factory=set, repr=False)


class Recorder:
    """The scheduler's ``ec_connector``, counted. Each call is O(1) beyond the
    connector's, ``build_connector_meta`` O(the pass's calls)."""

    def __init__(self, connector: Any) -> None:
        self.connector = connector
        self.counts = ConnectorCounts()
        self._hits: set[str] = set()
        self._checked: set[str] = set()
        self._loaded: list[str] = []
        self._updated: set[str] = set()
        # The request whose updates are running, and whether one was a load yet.
        self._updating: str | None = None
        self._loading = False
        #: The recorded events (``record``), else None.
        self.events: list[ev.Event] | None = None
        self._trace: list[TraceStep] = []
        self._worker: V2Worker | None = None
        self._inputs: dict[tuple[str, int], str] = {}
        self.passes = 0
        #: The cache's request stream as the loop made it: (key, rows) of each item
        #: vLLM scheduled through the connector (a load or a computation), in order;
        #: the GPU encoder cache in front has already served the rest.
        self.accesses: list[tuple[str, int]] = []

    def record(self, trace: list[TraceStep], worker: V2Worker) -> None:
        """Keep events from now on, placed in ``trace`` (the cache's calls); read
        what the worker holds from ``worker``."""
        self.events, self._trace, self._worker = [], trace, worker

    def _emit(self, make: Any, *fields: Any) -> None:
        if self.events is not None:
            self.events.append(make(self.passes, len(self._trace), *fields))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.connector, name)

    def has_cache_item(self, identifier: str) -> bool:
        hit = bool(self.connector.has_cache_item(identifier))
        self.counts.checks += 1
        self.counts.hits += hit
        self._checked.add(identifier)
        if hit:
            self._hits.add(identifier)
        self._emit(ev.Checked, f"p{self.passes}", identifier, hit)
        return hit

    def ensure_cache_available(self, *args: Any, **kwargs: Any) -> bool:
        self.counts.ensure_calls += 1
        return bool(self.connector.ensure_cache_available(*args, **kwargs))

    def update_state_after_alloc(self, request: Any, index: int) -> None:
        key = request.mm_features[index].identifier
        self.counts.updates += 1
        self._updated.add(key)
        if request.request_id != self._updating:
            self._updating, self._loading = request.request_id, False
        hit = key in self._hits
        if key not in self._checked or (self._loading and not hit):
            self.counts.order_breaks += 1
        self._loading |= hit
        if hit:
            self._loaded.append(key)
        self._inputs[(request.request_id, index)] = key
        self.accesses.append((key, request.mm_features[index].mm_position.get_num_embeds()))
        self.connector.update_state_after_alloc(request, index)
        self._emit(ev.Updated, f"p{self.passes}", key, hit)

    def update_state_after_free(self, request: Any, index: int) -> None:
        self.counts.frees += 1
        self.connector.update_state_after_free(request, index)

    def request_finished(self, request: Any) -> Any:
        self.counts.finished += 1
        return self.connector.request_finished(request)

    def update_connector_output(self, connector_output: Any) -> None:
        self.connector.update_connector_output(connector_output)
        report = connector_output.ec_connector_worker_meta
        if report is not None and (report.completed_saves or report.completed_loads):
            saves, loads = tuple(report.completed_saves), tuple(report.completed_loads)
            self._emit(ev.Reported, saves, loads)

    def build_connector_meta(self, scheduler_output: Any) -> Any:
        if self._checked and not self._updated:
            self._emit(ev.Unscheduled, f"p{self.passes}")
        meta = self.connector.build_connector_meta(scheduler_output)
        if self.events is not None:
            self._record_meta(scheduler_output, meta)
        c = self.counts
        c.loads += len(meta.loads)
        c.saves += len(meta.saves)
        c.saved_blocks += sum(map(len, meta.saves.values()))
        c.saved_keys.update(meta.saves)
        c.checked_hits_lost += sum(key not in meta.loads for key in self._loaded)
        c.checked_not_scheduled += len(self._checked - self._updated)
        self._hits.clear()
        self._checked.clear()
        self._loaded.clear()
        self._updated.clear()
        self._updating = None
        self._inputs.clear()
        self.passes += 1
        return meta

    def _record_meta(self, output: Any, meta: Any) -> None:
        """The metadata's saves and loads, the pass's end, the worker's drops."""
        assert self._worker is not None
        freed = list(output.free_encoder_mm_hashes)
        held = set(self._worker.encoder_cache) - set(freed)
        encoded = {
            self._inputs[(request_id, index)]
            for request_id, indices in output.scheduled_encoder_inputs.items()
            for index in indices
            if (request_id, index) in self._inputs
        } - held
        for key, block_ids in meta.saves.items():
            self._emit(ev.SaveDispatched, key, tuple(block_ids), key in encoded)
        for key, (transfer_id, block_ids, _shape) in meta.loads.items():
            self._emit(ev.LoadDispatched, key, transfer_id, tuple(block_ids))
        self._emit(ev.StepEnded, 0.0)
        for key in freed:
            self._emit(ev.GpuFreed, key)
