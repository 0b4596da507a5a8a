"""The worker as vLLM 0.33's V2 GPU model runner runs it, without a GPU or a model.

Each rule is read from vLLM's code and names its source:

1. ``GPUModelRunner.free_states`` (``v1/worker/gpu/model_runner.py``): the step's
   ``free_encoder_mm_hashes`` leave the GPU encoder cache first.
2. ``ActiveECConnector.maybe_get_output`` (``v1/worker/gpu/ec_connector.py``)
   binds the step's EC metadata; ``ECCPUWorker.start_load_caches``
   (``.../ec_connector/cpu/worker/__init__.py``) copies every dispatched load into
   the encoder cache, on every rank, each rank reading the load's blocks until it
   reports them; then the cache's keys are noted (``cached_hashes``).
3. ``EncoderRunner.prepare_mm_inputs`` (``v1/worker/gpu/mm/encoder_runner.py``):
   a scheduled encoder input is encoded only if its identifier is not already in
   the encoder cache.
4. ``maybe_get_output``, after the forward: ``save_caches`` runs only for the keys
   new in the encoder cache this step; ``ECCPUWorker.save_caches`` saves a key only
   if the metadata has a save for it, on the save rank (rank 0), writing its blocks.
   A dispatched save of any other key is never made.
5. ``EncoderRunner.gather_mm_embeddings``: every item overlapping a scheduled
   request's token window must be in the encoder cache, else vLLM raises
   ``RuntimeError("Encoder cache miss ...")``; counted here (``encoder_misses``).
6. ``ECCPUWorker.build_connector_worker_meta``: a copy is reported when it has
   finished, ``report_delay`` worker steps after it started (drawn per copy and
   per rank, seeded); the ranks' reports are concatenated
   (``ECCPUWorkerMetadata.aggregate``), so a load's transfer id appears once per
   rank.
7. The sampler: a request whose scheduled tokens reach the end of its prompt
   (``not request.is_prefill_chunk``) samples one token.

The worker also checks the blocks: a save must not write blocks a copy still in
flight reads or writes, and a load must not read blocks a save in flight writes
(``reused_in_flight``, 0 when the connector is right).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vllm.v1.request import Request

#: The token every sampling request samples (any id of the tokenizer's words).
SAMPLED_TOKEN = 10


@dataclass(frozen=True)
class WorkerFaults:
    """How the worker's reports come: delays per copy and per rank, seeded."""

    #: (low, high) worker steps between a copy's start and its report, per rank.
    report_delay: tuple[int, int] = (0, 2)
    #: The delay of ranks after the first, when given (a slow rank).
    other_ranks_delay: tuple[int, int] | None = None
    seed: int = 0


@dataclass
class Flight:
    """One rank's copy in flight: its blocks, until its report is delivered."""

    kind: str  # "save" (writes its blocks) or "load" (reads them)
    report: object  # the save's mm_hash or the load's transfer id
    blocks: frozenset[int]
    due: int


@dataclass
class WorkerCounts:
    """What the worker did, over the run."""

    encoded: int = 0
    saves_made: int = 0
    #: Saves in the metadata the worker never makes (rules 3 and 4).
    saves_never_made: int = 0
    loads: int = 0
    #: Items a scheduled request needs that the encoder cache lacks (rule 5).
    encoder_misses: int = 0
    #: Copies whose blocks a copy still in flight was using.
    reused_in_flight: int = 0
    never_made_keys: list[str] = field(default_factory=list, repr=False)


class V2Worker:
    """The V2 model runner's encoder cache and EC copies, over ``ranks`` ranks.
    ``execute`` is O(the step's items + the copies in flight x their blocks)."""

    def __init__(self, ranks: int, faults: WorkerFaults) -> None:
        self.ranks = ranks
        self.faults = faults
        self._rng = random.Random(f"{faults.seed}:worker")
        #: The GPU encoder cache's keys (every rank holds the same), in the order
        #: they came in: new outputs are saved in that order (vLLM iterates a set
        #: difference, in no set order; one fixed order keeps runs reproducible).
        self.encoder_cache: dict[str, None] = {}
        self.flights: list[Flight] = []
        self.counts = WorkerCounts()
        self.steps = 0

    def _delay(self, rank: int) -> int:
        span = self.faults.report_delay
        if rank > 0 and self.faults.other_ranks_delay is not None:
            span = self.faults.other_ranks_delay
        return self._rng.randint(*span)

    def _start(self, kind: str, report: object, blocks: frozenset[int], rank: int) -> None:
        clash = (lambda f: True) if kind == "save" else (lambda f: f.kind == "save")
        if any(clash(f) and not blocks.isdisjoint(f.blocks) for f in self.flights):
            self.counts.reused_in_flight += 1
        self.flights.append(Flight(kind, report, blocks, self.steps + self._delay(rank)))

    def execute(self, output: Any, requests: dict[str, Request]) -> Any:
        """Run one ``SchedulerOutput``; return its ``ModelRunnerOutput``."""
        from vllm.distributed.ec_transfer.ec_connector.cpu.common import ECCPUWorkerMetadata
        from vllm.v1.outputs import ECConnectorOutput, ModelRunnerOutput

        cache = self.encoder_cache
        for mm_hash in output.free_encoder_mm_hashes:  # rule 1
            cache.pop(mm_hash, None)
        meta = output.ec_connector_metadata
        saves: dict[str, list[int]] = meta.saves if meta is not None else {}
        loads: dict[str, Any] = meta.loads if meta is not None else {}
        for mm_hash, (transfer_id, block_ids, _shape) in loads.items():  # rule 2
            for rank in range(self.ranks):
                self._start("load", transfer_id, frozenset(block_ids), rank)
            cache[mm_hash] = None
            self.counts.loads += 1
        cached = set(cache)
        for req_id, input_ids in output.scheduled_encoder_inputs.items():  # rule 3
            features = requests[req_id].mm_features
            for index in input_ids:
                key = features[index].identifier
                if key not in cache:
                    cache[key] = None
                    self.counts.encoded += 1
        for mm_hash in [k for k in cache if k not in cached]:  # rule 4
            if mm_hash in saves:
                self._start("save", mm_hash, frozenset(saves[mm_hash]), 0)
                self.counts.saves_made += 1
        for mm_hash in saves:
            if mm_hash not in cache or mm_hash in cached:
                self.counts.saves_never_made += 1
                self.counts.never_made_keys.append(mm_hash)
        self._gather(output, requests)  # rule 5
        report = self._report(ECCPUWorkerMetadata)  # rule 6
        req_ids = list(output.num_scheduled_tokens)
        sampled = [  # rule 7
            [] if requests[r].is_prefill_chunk else [SAMPLED_TOKEN] for r in req_ids
        ]
        self.steps += 1
        return ModelRunnerOutput(
            req_ids=req_ids,
            req_id_to_index={r: i for i, r in enumerate(req_ids)},
            sampled_token_ids=sampled,
            ec_connector_output=ECConnectorOutput(ec_connector_worker_meta=report),
        )

    def _gather(self, output: Any, requests: dict[str, Request]) -> None:
        for req_id, scheduled in output.num_scheduled_tokens.items():
            request = requests[req_id]
            end = request.num_computed_tokens
            start = end - scheduled
            for feature in request.mm_features:
                place = feature.mm_position
                overlaps = place.offset < end and start < place.offset + place.length
                if overlaps and feature.identifier not in self.encoder_cache:
                    self.counts.encoder_misses += 1

    def _report(self, metadata: Any) -> Any:
        done = [f for f in self.flights if f.due <= self.steps]
        if not done:
            return None
        self.flights = [f for f in self.flights if f.due > self.steps]
        saves = [str(f.report) for f in done if f.kind == "save"]
        loads = [int(f.report) for f in done if f.kind == "load"]  # type: ignore[call-overload]
        return metadata(completed_saves=saves, completed_loads=loads)
