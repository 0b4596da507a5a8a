"""The engine core's loop around vLLM's real scheduler: ``EngineCore.step`` or
``EngineCore.step_with_batch_queue`` (``v1/engine/core.py``), with the worker of
``worker`` in place of the model executor.

- ``Scheduler`` (``async_scheduling=False``): per engine step, ``schedule()``, the
  worker runs the output, ``update_from_output`` gets its result.
- ``AsyncScheduler`` (vLLM's default with the V2 runner): the batch queue of two.
  A step schedules a new batch while the queue has room and there is work, and
  returns; otherwise it takes the oldest batch's result and runs
  ``update_from_output``. So step t+1 is scheduled before step t's output is
  applied.

Before each engine step the stream's arrivals are added (``add_request``) and its
abort, if any, is made (``finish_requests(..., FINISHED_ABORTED)``), as the
engine core's input queue does between steps. After the arrival window the loop
steps on while ``scheduler.has_requests()`` (which asks the EC connector's
``has_pending_push_work()``: vLLM keeps stepping while it is True), up to
``idle_limit`` steps: a run that reaches the limit never went idle.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine.result import held_entries
from .engine import EngineSettings, build_scheduler
from .recorder import ConnectorCounts, Recorder
from .stream import ArrivalSpec, StepEvents, generate, make_request
from .worker import V2Worker, WorkerCounts, WorkerFaults

if TYPE_CHECKING:
    from ..tracing import TraceStep

#: The engine core's batch queue size with async scheduling.
BATCH_QUEUE_SIZE = 2
#: A ``schedule()`` call whose wall time exceeds its CPU time by more than this was
#: descheduled: timing figures leave it out.
DESCHEDULED_SECONDS = 50e-6


@dataclass(frozen=True)
class LoopSpec:
    """A run: the engine, the stream, the worker's report delays, the drain bound."""

    settings: EngineSettings = field(default_factory=EngineSettings)
    stream: ArrivalSpec = field(default_factory=ArrivalSpec)
    faults: WorkerFaults = field(default_factory=WorkerFaults)
    idle_limit: int = 200
    #: Record the engine's events beside the traced cache's calls (a ``-traced``
    #: connector; the clock of ``traced`` moves one second per engine step).
    record_events: bool = False


@dataclass(frozen=True)
class LoopEndState:
    """The cache once the loop stopped: what stays held, and whether vLLM idles."""

    never_ready: int
    never_ready_blocks: int
    held_entries: int
    held_blocks: int
    pending_push_work: bool
    went_idle: bool


@dataclass
class LoopResult:
    """A finished run: the connector's and the worker's counts, the end state, the
    scheduler's time per ``schedule()`` call (seconds) and the scheduler itself."""

    spec: LoopSpec
    connector: ConnectorCounts
    worker: WorkerCounts
    end: LoopEndState
    engine_steps: int
    preemptions: int
    aborted: int
    schedule_seconds: list[float]
    descheduled: list[bool]
    #: How many of ``schedule_seconds`` fell in the arrival window (the rest: the
    #: drain, whose length differs between connectors: a leak never drains).
    window_calls: int
    scheduler: Any
    #: The (key, rows) stream the cache served (``Recorder.accesses``).
    accesses: list[tuple[str, int]] = field(default_factory=list)


class EngineLoop:
    """vLLM's scheduler, its recorded connector and the worker, stepped in the
    engine core's order."""

    def __init__(self, spec: LoopSpec, model_dir: Path) -> None:
        self.spec = spec
        self.scheduler = build_scheduler(spec.settings, model_dir)
        self.recorder = Recorder(self.scheduler.ec_connector)
        # It stands in the connector's slot and answers as the connector does.
        self.scheduler.ec_connector = self.recorder  # type: ignore[assignment]
        self.worker = V2Worker(spec.settings.ranks, spec.faults)
        self.trace: list[TraceStep] | None = None
        if spec.record_events:
            from .traced import last_trace

            self.trace = last_trace()
            self.recorder.record(self.trace, self.worker)
        self.requests: dict[str, Any] = {}
        self.queue: collections.deque[tuple[Any, Any]] = collections.deque()
        self.schedule_seconds: list[float] = []
        #: Per ``schedule()`` call: whether the process was descheduled during it.
        self.descheduled: list[bool] = []
        self.window_calls = 0
        self.steps = 0
        self.preemptions = 0
        self.aborted = 0

    def _schedule(self) -> Any:
        start, cpu = time.perf_counter(), time.thread_time()
        output = self.scheduler.schedule()
        wall = time.perf_counter() - start
        self.schedule_seconds.append(wall)
        self.descheduled.append(wall - (time.thread_time() - cpu) > DESCHEDULED_SECONDS)
        self.preemptions += len(output.preempted_req_ids or ())
        return output, self.worker.execute(output, self.requests)

    def step(self) -> None:
        """One engine-core step (``step`` or ``step_with_batch_queue``)."""
        self.steps += 1
        if self.trace is not None:
            from .traced import CLOCK

            CLOCK.advance(1.0)
        scheduler = self.scheduler
        if not self.spec.settings.async_scheduling:
            if scheduler.has_requests():
                output, result = self._schedule()
                scheduler.update_from_output(output, result)
            return
        queue = self.queue
        if scheduler.has_requests():
            output, result = self._schedule()
            queue.appendleft((output, result))
            executed = output.total_num_scheduled_tokens > 0
            if len(queue) < BATCH_QUEUE_SIZE and (executed or scheduler.has_requests()):
                return
        elif not queue:
            return
        output, result = queue.pop()
        scheduler.update_from_output(output, result)

    def arrive(self, events: Any) -> None:
        """The step's new requests and abort, before the step."""
        from vllm.v1.request import RequestStatus

        for arrival in events.arrivals:
            request = make_request(arrival)
            self.requests[arrival.request_id] = request
            self.scheduler.add_request(request)
        if events.abort is not None:
            live = [r for r in self.requests if not self.requests[r].is_finished()]
            if live:
                victim = live[int(events.abort * len(live))]
                self.scheduler.finish_requests(victim, RequestStatus.FINISHED_ABORTED)
                self.aborted += 1

    def idle(self) -> bool:
        return not self.scheduler.has_requests() and not self.queue

    def end_state(self, went_idle: bool) -> LoopEndState:
        """The held entries now, read through the cache's ``get``. O(keys saved)."""
        cache = self.recorder.connector.connector_scheduler._cache
        counts = held_entries(cache, self.recorder.counts.saved_keys)
        pending = bool(self.recorder.connector.has_pending_push_work())
        return LoopEndState(*counts, pending, went_idle)

    def result(self) -> LoopResult:
        """The run so far, with the end state read now."""
        return LoopResult(
            self.spec,
            self.recorder.counts,
            self.worker.counts,
            self.end_state(self.idle()),
            self.steps,
            self.preemptions,
            self.aborted,
            self.schedule_seconds,
            self.descheduled,
            self.window_calls or len(self.schedule_seconds),
            self.scheduler,
            self.recorder.accesses,
        )


def run(spec: LoopSpec, model_dir: Path, script: Sequence[StepEvents] | None = None) -> LoopResult:
    """Feed ``spec``'s stream (or ``script``, a stream written by hand: an empty
    ``StepEvents`` is a step with no arrival) to the loop, then step until idle (or
    ``idle_limit`` steps). O(steps x the scheduler's step)."""
    loop = EngineLoop(spec, model_dir)
    for events in generate(spec.stream) if script is None else script:
        loop.arrive(events)
        loop.step()
    loop.window_calls = len(loop.schedule_seconds)
    for _ in range(spec.idle_limit):
        if loop.idle():
            break
        loop.step()
    return loop.result()
