"""The real engine's record as the steps of tla/trace/EmbeddingCacheProtocolTrace.tla.

A run of the real-scheduler harness (``engine``) with ``record_events`` and a traced
cache leaves two logs: the engine's events (``engine.events``) and the cache's calls
(``TracedEmbeddingCache.trace``). Each event's ``cache_at`` says how many calls came
before it, so the calls an event caused are the ones since the previous event
(``Checked``: its check's call; ``Updated``: its producer side's alloc and its consumer
side's pin; ``Reported``: the report's mark_ready and unpins; the first of
``SaveDispatched``, ``LoadDispatched`` and ``StepEnded`` after a step's updates: what
``build_connector_meta`` released). ``protocol_steps`` merges the two logs into the
steps the trace spec takes, one protocol action each (the table in the spec's header):

- a request's ``Checked`` events: one ``check`` (its items; scheduled or not), then one
  ``check_item`` per event, with its call;
- ``Updated``: ``produce`` (the producer side: its alloc, if any) then ``load`` (the
  consumer side: its pin, if any);
- ``Unscheduled``: one ``unschedule`` per item its check missed; a pin released when
  the step's meta is built (``release_lease`` or ``unpin``): ``unschedule`` of its key;
- ``Reported``: ``save_reported`` per reported save, ``load_reported`` per load whose
  last rank reported, each with the call on its key;
- ``SaveDispatched``, ``LoadDispatched``, ``StepEnded``: ``save_dispatched``,
  ``load_dispatched``, ``step_end``;
- ``GpuFreed`` (the real loop's GPU encoder cache): ``gpu_free``.

The mapping looks at what the record shows, never at what the model would do: a call
it has no place for becomes an ``unexpected`` step, which the spec never takes, and a
missing call leaves its step without one, which the spec takes only where the model
makes none. Clock moves (``tick``) are not protocol steps (the cache's own trace
validation checks them); a lease's ``expire`` is unexpected (the model releases a
load's pin at its report only). Each step carries the cache's abstract state after it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from embedding_cache import EmbeddingCache
from embedding_cache.verification import state_of

from ..abstraction import AbstractState, abstract_state
from ..engine import events as ev
from ..tracing import TraceStep

#: The acts, in the order of the trace spec's table, each with the protocol model's
#: action (EmbeddingCacheProtocol) or condition it is checked as; ``unexpected`` is
#: never taken.
MODEL_ACTIONS = {
    "check": "CheckVllm, CheckSafe",
    "check_item": "CheckPin; vllm: a query",
    "produce": "Produce",
    "load": "Load",
    "unschedule": "Unschedule",
    "save_reported": "SaveDone, SaveFailed",
    "load_reported": "LoadDone",
    "save_dispatched": "the save its Produce dispatched",
    "load_dispatched": "the load's pin held",
    "step_end": "Idle",
    "gpu_free": "GpuDrop",
    "unexpected": "none",
}
#: The calls a check or a consumer side pins with; the calls that release a pin.
PIN_CALLS = frozenset({"lease", "pin_if_ready", "pin"})
RELEASE_CALLS = frozenset({"release_lease", "unpin"})
#: The calls that resolve a reported save.
SAVE_CALLS = frozenset({"mark_ready", "discard"})


@dataclass(frozen=True)
class ProtocolStep:
    """One step of the merged record, as the trace spec reads it."""

    act: str  # one of MODEL_ACTIONS
    key: str  # the item ("" for check and step_end)
    keys: tuple[str, ...]  # check: the request's checked items
    flag: bool  # check: scheduled; check_item: the answer; save_dispatched: computed
    call: TraceStep | None  # the cache call the step made
    post: AbstractState  # the cache after the step
    event: str  # the recorded event (and call), for reports


def describe_call(call: TraceStep | None) -> str:
    """``op('key', n) -> result``, or "no call". O(1)."""
    if call is None:
        return "no call"
    n = "" if call.n_blocks is None else f", {call.n_blocks}"
    return f"{call.op}({call.key!r}{n}) -> {call.result}"


def empty_cache(num_blocks: int) -> AbstractState:
    """The abstract state of a new cache of ``num_blocks`` (fifo), before any call."""
    return abstract_state(state_of(EmbeddingCache(num_blocks)))


class _Merger:
    """Walks the events, taking each one's calls off the cache trace in order."""

    def __init__(self, trace: Sequence[TraceStep], num_blocks: int, ranks: int) -> None:
        self.trace = trace
        self.at = 0
        self.post = empty_cache(num_blocks)
        self.ranks = ranks
        self.steps: list[ProtocolStep] = []
        self.load_keys: dict[int, str] = {}  # transfer id -> its item
        self.load_reports: Counter[int] = Counter()
        self.misses: list[str] = []  # the current request's items its check missed

    def calls(self, upto: int) -> list[TraceStep]:
        """The calls up to position ``upto`` of the trace not yet taken (no ticks)."""
        got = [s for s in self.trace[self.at : max(self.at, upto)] if s.op != "tick"]
        self.at = max(self.at, upto)
        return got

    def emit(
        self,
        act: str,
        event: str,
        key: str = "",
        keys: tuple[str, ...] = (),
        flag: bool = False,
        call: TraceStep | None = None,
    ) -> None:
        assert act in MODEL_ACTIONS, act
        if call is not None:
            self.post = call.post
        what = event if act in ("check", "step_end") else f"{event}: {describe_call(call)}"
        self.steps.append(ProtocolStep(act, key, keys, flag, call, self.post, what))

    def unexpected(self, calls: Sequence[TraceStep], event: str) -> None:
        for call in calls:
            self.emit("unexpected", f"{event}, a call with no place", call.key, call=call)

    def take(self, events: Sequence[ev.Event], index: int) -> None:
        event = events[index]
        calls = self.calls(event.cache_at)
        if isinstance(event, ev.Checked):
            self.checked(events, index, calls)
        elif isinstance(event, ev.Updated):
            self.updated(event, calls)
        elif isinstance(event, ev.Reported):
            self.reported(event, calls)
        elif isinstance(event, (ev.SaveDispatched, ev.LoadDispatched, ev.StepEnded)):
            self.built(event, calls)
        elif isinstance(event, ev.GpuFreed):
            self.unexpected(calls, "GpuFreed")
            self.emit("gpu_free", f"GpuFreed(step {event.step}, {event.key})", event.key)
        else:  # StepBegan, Unscheduled: no call of their own
            self.unexpected(calls, type(event).__name__)
            if isinstance(event, ev.Unscheduled):
                for key in self.misses:
                    self.emit("unschedule", f"Unscheduled(request {event.request})", key)

    def checked(self, events: Sequence[ev.Event], index: int, calls: list[TraceStep]) -> None:
        event = events[index]
        assert isinstance(event, ev.Checked)
        previous = events[index - 1] if index else None
        if not (isinstance(previous, ev.Checked) and previous.request == event.request):
            items = list(_request_checks(events, index))
            scheduled = not _unscheduled_after(events, index + len(items), event.request)
            keys = tuple(e.key for e in items)
            said = "scheduled" if scheduled else "not scheduled"
            self.emit(
                "check",
                f"Checked(request {event.request}: {', '.join(keys)}; {said})",
                keys=keys,
                flag=scheduled,
            )
            self.misses = [e.key for e in items if not e.hit]
        answer = "hit" if event.hit else "miss"
        what = f"Checked(request {event.request}, {event.key}, {answer})"
        first = calls[0] if calls and calls[0].op in PIN_CALLS else None
        self.emit("check_item", what, event.key, flag=event.hit, call=first)
        self.unexpected(calls[1:] if first else calls, what)

    def updated(self, event: ev.Updated, calls: list[TraceStep]) -> None:
        side = "loaded" if event.loaded else "computed"
        what = f"Updated(request {event.request}, {event.key}, {side})"
        rest = list(calls)
        alloc = rest.pop(0) if rest and rest[0].op == "alloc" else None
        pin = rest.pop(0) if rest and rest[0].op in PIN_CALLS else None
        self.emit("produce", f"{what}, producer side", event.key, call=alloc)
        self.emit("load", f"{what}, consumer side", event.key, call=pin)
        self.unexpected(rest, what)

    def reported(self, event: ev.Reported, calls: list[TraceStep]) -> None:
        what = f"Reported(step {event.step})"
        saves = list(event.saves)
        loads = []
        for transfer_id in event.loads:
            self.load_reports[transfer_id] += 1
            if self.load_reports[transfer_id] == self.ranks and transfer_id in self.load_keys:
                loads.append(self.load_keys[transfer_id])
        for call in calls:
            if call.op in SAVE_CALLS and call.key in saves:
                saves.remove(call.key)
                self.emit("save_reported", f"{what}, save of {call.key}", call.key, call=call)
            elif call.op in RELEASE_CALLS and call.key in loads:
                loads.remove(call.key)
                self.emit("load_reported", f"{what}, load of {call.key}", call.key, call=call)
            else:
                self.unexpected([call], what)
        for key in saves:
            self.emit("save_reported", f"{what}, save of {key}", key)
        for key in loads:
            self.emit("load_reported", f"{what}, load of {key}", key)

    def built(self, event: ev.Event, calls: list[TraceStep]) -> None:
        for call in calls:
            if call.op in RELEASE_CALLS:
                self.emit("unschedule", f"meta built (step {event.step})", call.key, call=call)
            else:
                self.unexpected([call], f"meta built (step {event.step})")
        if isinstance(event, ev.SaveDispatched):
            said = "computed" if event.computed else "not computed"
            self.emit(
                "save_dispatched",
                f"SaveDispatched(step {event.step}, {event.key}, {said})",
                event.key,
                flag=event.computed,
            )
        elif isinstance(event, ev.LoadDispatched):
            self.load_keys[event.transfer_id] = event.key
            self.emit(
                "load_dispatched",
                f"LoadDispatched(step {event.step}, {event.key}, transfer {event.transfer_id})",
                event.key,
            )
        else:
            self.emit("step_end", f"StepEnded(step {event.step})")


def _request_checks(events: Sequence[ev.Event], index: int) -> Iterator[ev.Checked]:
    """The run of ``Checked`` events of one request starting at ``index``."""
    first = events[index]
    assert isinstance(first, ev.Checked)
    for event in events[index:]:
        if not (isinstance(event, ev.Checked) and event.request == first.request):
            return
        yield event


def _unscheduled_after(events: Sequence[ev.Event], index: int, request: str) -> bool:
    """True when the event at ``index`` says ``request`` was not scheduled."""
    if index >= len(events):
        return False
    event = events[index]
    return isinstance(event, ev.Unscheduled) and event.request == request


def protocol_steps(
    events: Sequence[ev.Event], trace: Sequence[TraceStep], num_blocks: int, ranks: int = 1
) -> list[ProtocolStep]:
    """The merged record of one run as the trace spec's steps, in order: ``events`` (the
    run's, recorded with a traced cache) and ``trace`` (its cache's calls) over a pool of
    ``num_blocks``, each load reported by ``ranks`` ranks. O(events + calls).

    Raises:
        ValueError: an event recorded untraced (``cache_at`` -1).
    """
    if any(e.cache_at < 0 for e in events):
        raise ValueError("the run's cache was not traced: record it with CacheChoice(traced=True)")
    merger = _Merger(trace, num_blocks, ranks)
    for index in range(len(events)):
        merger.take(events, index)
    merger.unexpected(merger.calls(len(trace)), "after the last event")
    return merger.steps
