"""What the scheduler asks of its EC connector, counted as it happens.

``Recorder`` stands in the scheduler's ``ec_connector`` slot and hands every call
to the connector vLLM's factory made (upstream's or the plugin): it changes no
answer and no order. It counts the checks and their hits, and, per scheduling
pass, the checked hits vLLM then scheduled as loads (``update_state_after_alloc``
of an item whose check said True in the same pass): a checked hit whose load the
pass's metadata does not dispatch is lost (the worker then has no embeddings for
it). It also keeps every key a save was dispatched for, to read the cache's end
state through ``get``.

It also checks the order the older model of the scheduler (``engine.run``) assumes
against the real loop (``order_breaks``, 0 when the model's order holds): every
item vLLM updates in a pass was checked in that pass, and a request's computed
items are updated before its loaded ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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

    def __getattr__(self, name: str) -> Any:
        return getattr(self.connector, name)

    def has_cache_item(self, identifier: str) -> bool:
        hit = bool(self.connector.has_cache_item(identifier))
        self.counts.checks += 1
        self.counts.hits += hit
        self._checked.add(identifier)
        if hit:
            self._hits.add(identifier)
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
        self.connector.update_state_after_alloc(request, index)

    def update_state_after_free(self, request: Any, index: int) -> None:
        self.counts.frees += 1
        self.connector.update_state_after_free(request, index)

    def request_finished(self, request: Any) -> Any:
        self.counts.finished += 1
        return self.connector.request_finished(request)

    def build_connector_meta(self, scheduler_output: Any) -> Any:
        meta = self.connector.build_connector_meta(scheduler_output)
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
        return meta
