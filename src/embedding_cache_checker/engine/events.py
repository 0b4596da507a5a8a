"""The engine's event record: one typed record per thing the engine does.

A run with ``record_events`` keeps a list of these, in the order they happened.
Every record has the ``step`` it belongs to (the drain's reports: ``steps``, one
past the last) and ``cache_at``: how many steps the cache's own trace
(``TracedEmbeddingCache.trace``, when the choice is ``traced``) held when the
event happened, -1 untraced. The cache calls an event caused are therefore
``trace[previous event's cache_at : this event's cache_at]``, which merges the
two records into one sequence for trace validation against tla/protocol/.

- ``StepBegan``: a scheduler step starts; the fake clock's reading.
- ``Reported``: a worker report is delivered (``update_connector_output``); the
  saves and the load transfer ids it reports (an id once per reporting rank).
- ``Checked``: ``has_cache_item`` answered; request, key, ``hit``.
- ``Unscheduled``: a checked request is not scheduled (no update follows).
- ``Updated``: ``update_state_after_alloc`` ran; request, key, ``loaded``
  (False: the item is computed).
- ``SaveDispatched``: the step's meta holds a save; key, block ids, ``computed``
  (the engine computed the item this step: False is a save never made).
- ``LoadDispatched``: the step's meta holds a load; key, transfer id, block ids.
- ``StepEnded``: ``build_connector_meta`` returned; the scheduler's time in the
  step, in seconds.
- ``GpuFreed``: the step's ``free_encoder_mm_hashes`` holds the key: the worker
  drops its output (recorded by the real loop, ``engine_loop``, whose scheduler has
  vLLM's GPU encoder cache).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Event:
    """What every record has."""

    step: int
    cache_at: int


@dataclass(frozen=True, slots=True)
class StepBegan(Event):
    clock: float


@dataclass(frozen=True, slots=True)
class Reported(Event):
    saves: tuple[str, ...]
    loads: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Checked(Event):
    request: str
    key: str
    hit: bool


@dataclass(frozen=True, slots=True)
class Unscheduled(Event):
    request: str


@dataclass(frozen=True, slots=True)
class Updated(Event):
    request: str
    key: str
    loaded: bool


@dataclass(frozen=True, slots=True)
class SaveDispatched(Event):
    key: str
    block_ids: tuple[int, ...]
    computed: bool


@dataclass(frozen=True, slots=True)
class LoadDispatched(Event):
    key: str
    transfer_id: int
    block_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class StepEnded(Event):
    seconds: float


@dataclass(frozen=True, slots=True)
class GpuFreed(Event):
    key: str
