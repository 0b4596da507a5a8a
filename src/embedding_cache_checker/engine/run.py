"""The engine: drives vLLM's real EC scheduler step by step, in vLLM's order.

Per step (vLLM 0.33's ``Scheduler.schedule``, ``_try_schedule_encoder_inputs``,
``_allocate_encoder_inputs``, then ``update_from_output`` of the step before):

1. the worker's reports due now are delivered, each through
   ``update_connector_output`` (the ``ECCPUWorkerMetadata`` of a real
   ``ECConnectorOutput``);
2. per request, in order: ``has_cache_item`` for each of its items, except those
   already scheduled this step (vLLM's GPU encoder cache serves them); if the
   request is scheduled, ``update_state_after_alloc`` for its computed items, then
   for its loaded ones;
3. ``build_connector_meta``; the worker makes the step's transfers (``worker``).

After the last step the drain delivers every report still pending; then the
end state is counted (``EndState``). The fake clock advances ``step_seconds``
per step; the project's cache reads its lease deadlines on it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import events as ev
from .choice import CacheChoice, build
from .requests import make_request
from .result import Counters, EndState, StepRecord, held_entries, step_record
from .stream import Request, StreamSpec, steps
from .stubs import Settings, require_vllm
from .worker import Faults, Worker

if TYPE_CHECKING:
    from vllm.distributed.ec_transfer.ec_connector.cpu.scheduler import ECCPUScheduler

    from ..tracing import TraceStep


class FakeClock:
    """A clock the engine moves: ``step_seconds`` per step."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass(frozen=True)
class EngineSpec:
    """A run: the stream, the instance, the cache inside, the worker's faults."""

    stream: StreamSpec = field(default_factory=StreamSpec)
    settings: Settings = field(default_factory=Settings)
    choice: CacheChoice = field(default_factory=CacheChoice)
    faults: Faults = field(default_factory=Faults)
    step_seconds: float = 0.01
    record_events: bool = False
    keep_block_ids: bool = False


@dataclass
class RunResult:
    """A finished run; ``engine`` stays live (its scheduler, cache and clock)."""

    spec: EngineSpec
    counters: Counters
    end: EndState
    records: list[StepRecord]
    events: list[ev.Event]
    trace: list[TraceStep] | None
    engine: Engine


class Engine:
    """One scheduler under a stream; ``step`` per step, then ``drain``."""

    def __init__(self, spec: EngineSpec) -> None:
        require_vllm()
        self.spec = spec
        self.clock = FakeClock()
        built = build(spec.choice, spec.settings, self.clock)
        self.scheduler: ECCPUScheduler = built.scheduler
        self.trace = built.trace
        self.worker = Worker(spec.faults, spec.settings.ranks)
        self.counters = Counters()
        self.records: list[StepRecord] = []
        self.events: list[ev.Event] = []
        #: Every key ever allocated (every alloc of the scheduler becomes a save).
        self.saved_keys: set[str] = set()
        self._spent = 0.0

    def _at(self) -> int:
        return -1 if self.trace is None else len(self.trace)

    def _timed(self, call: Any, *args: Any) -> Any:
        start = time.perf_counter()
        try:
            return call(*args)
        finally:
            self._spent += time.perf_counter() - start

    def deliver(self, step: int, reports: list[tuple[list[str], list[int]]]) -> None:
        """Each report through ``update_connector_output``, as vLLM delivers it."""
        from vllm.distributed.ec_transfer.ec_connector.cpu.common import ECCPUWorkerMetadata
        from vllm.v1.outputs import ECConnectorOutput

        for saves, loads in reports:
            meta = ECCPUWorkerMetadata(completed_saves=list(saves), completed_loads=list(loads))
            self._timed(
                self.scheduler.update_connector_output,
                ECConnectorOutput(ec_connector_worker_meta=meta),
            )
            if self.spec.record_events:
                self.events.append(ev.Reported(step, self._at(), tuple(saves), tuple(loads)))

    def step(self, step: int, requests: list[Request]) -> None:
        """One scheduler step of ``requests``."""
        self._spent = 0.0
        self.clock.advance(self.spec.step_seconds)
        if self.spec.record_events:
            self.events.append(ev.StepBegan(step, self._at(), self.clock.now))
        self.deliver(step, self.worker.due(step))
        scheduled: set[str] = set()
        computed: set[str] = set()
        loaded: list[str] = []
        for index, request in enumerate(requests):
            self._schedule(f"{step}-{index}", step, request, scheduled, computed, loaded)
        meta = self._timed(self.scheduler.build_connector_meta, None)
        self._account(step, meta, computed, loaded)
        self.counters.steps += 1
        self.counters.step_seconds.append(self._spent)
        if self.spec.record_events:
            self.events.append(ev.StepEnded(step, self._at(), self._spent))

    def _schedule(
        self,
        request_id: str,
        step: int,
        request: Request,
        scheduled: set[str],
        computed: set[str],
        loaded: list[str],
    ) -> None:
        """``_try_schedule_encoder_inputs`` then ``_allocate_encoder_inputs`` of one request."""
        record = self.spec.record_events
        vllm_request = make_request(request_id, request.items)
        hits: list[int] = []
        misses: list[int] = []
        for index, (key, _rows) in enumerate(request.items):
            if key in scheduled:
                continue
            hit = bool(self._timed(self.scheduler.has_cache_item, key))
            (hits if hit else misses).append(index)
            self.counters.checks += 1
            self.counters.hits += hit
            if record:
                self.events.append(ev.Checked(step, self._at(), request_id, key, hit))
        self.counters.requests += 1
        if not request.scheduled:
            self.counters.unscheduled += 1
            if record:
                self.events.append(ev.Unscheduled(step, self._at(), request_id))
            return
        for index, is_hit in [(i, False) for i in misses] + [(i, True) for i in hits]:
            key = request.items[index][0]
            self._timed(self.scheduler.update_state_after_alloc, vllm_request, index)
            scheduled.add(key)
            if is_hit:
                loaded.append(key)
            else:
                computed.add(key)
            if record:
                self.events.append(ev.Updated(step, self._at(), request_id, key, is_hit))

    def _account(self, step: int, meta: Any, computed: set[str], loaded: list[str]) -> None:
        """Count the step's meta, hand it to the worker, record it."""
        c = self.counters
        c.computed += len(computed)
        c.saves += len(meta.saves)
        c.saved_blocks += sum(map(len, meta.saves.values()))
        c.loads += len(meta.loads)
        c.checked_hits_lost += sum(key not in meta.loads for key in loaded)
        self.saved_keys.update(meta.saves)
        done = self.worker.run(step, meta, computed)
        c.saves_never_made += len(done.saves_never_made)
        c.saves_failed += len(done.saves_failed)
        c.lost_load_reports += len(done.lost_load_reports)
        c.reused_in_flight += done.reused_in_flight
        self.records.append(step_record(step, meta, self.spec.keep_block_ids))
        if self.spec.record_events:
            at = self._at()
            for key, block_ids in meta.saves.items():
                self.events.append(
                    ev.SaveDispatched(step, at, key, tuple(block_ids), key in computed)
                )
            for key, (transfer_id, block_ids, _shape) in meta.loads.items():
                self.events.append(ev.LoadDispatched(step, at, key, transfer_id, tuple(block_ids)))

    def drain(self) -> None:
        """Deliver every report still pending (after the last step)."""
        self.deliver(self.counters.steps, self.worker.drain())

    def end_state(self) -> EndState:
        """The held entries now, through the cache's ``get``. O(keys ever saved)."""
        counts = held_entries(self.scheduler._cache, self.saved_keys)
        return EndState(*counts, bool(self.scheduler.has_pending_push_work()))


def run(spec: EngineSpec) -> RunResult:
    """Run ``spec``'s stream through its scheduler, drain, and count. O(stream x blocks)."""
    engine = Engine(spec)
    for index, requests in enumerate(steps(spec.stream)):
        engine.step(index, requests)
    engine.drain()
    return RunResult(
        spec,
        engine.counters,
        engine.end_state(),
        engine.records,
        engine.events,
        engine.trace,
        engine,
    )
