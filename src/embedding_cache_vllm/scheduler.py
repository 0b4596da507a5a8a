"""``VerifiedECCPUScheduler``: vLLM's ``ECCPUScheduler`` on the project's cache, safe order.

vLLM 0.33's scheduler checks an item (``has_cache_item``: present and ready),
then, per request, runs ``update_state_after_alloc`` for its computed items and
then for its loaded ones. Upstream's update allocates a computed item first,
which may evict a hit the check just reported; the hit is then neither loaded
nor computed, and its producer side allocates it again and dispatches a save of
an output the engine never computed. The worker never makes that save, so the
entry stays not-ready, its blocks held, for ever (spec/PROTOCOLS.md section 3).

Here the check takes a lease on the hit (``EmbeddingCache.lease``): a pinned
entry cannot be evicted, so the hit survives the allocs that follow, and the
lease *is* its load's pin (no second pin: the policy hears of one use). The
producer side runs only for the items the check did not report as hits. A check
lease whose load was not dispatched by the end of the step (vLLM checked a
request it then did not schedule) is released in ``build_connector_meta``; a
load's lease is released when every rank has reported its transfer, or ends by
itself at its deadline when a report is lost (spec/SPEC.md section 12).

With NIXL on (spec/PROTOCOLS.md section 6) three more leaks are closed: an error
in ``_start_xfer`` after its alloc discards the entry; the entries of the READs
a dead peer's session dropped are discarded after a bounded hold; and the
consumer's sessions are polled every step (``build_connector_meta``), not only
when a request is scheduled. The producer session's grants pin by the cache's
leases (``LeasedProducerSession``).

vLLM's GPU encoder cache sits in front of the connector (spec/PROTOCOLS.md
section 4.1): its ``can_allocate`` may evict an item X and the same scheduling
pass allocate X again as a computed input; vLLM then keeps X's tensor on the
worker (X is left out of ``free_encoder_mm_hashes``), the worker does not encode
X again, and it saves only outputs new this step: a save dispatched for X is
never made. So the plugin mirrors the worker's encoder cache (``worker_keeps``:
what it holds after each step's metadata) and dispatches a save only for an
output the worker will really encode: an item it keeps gets no alloc, and when
the step's metadata is built, a pending save the worker will not make (its item
kept, or its request's encoder inputs withdrawn) has its not-ready entry
discarded, before any copy into it can start. An item larger than the whole
pool is computed without being cached (one warning names ``ec_cpu_bytes``).

Every override and why: docs/VLLM.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from vllm.distributed.ec_transfer.ec_connector.cpu.common import (
    ECCPUConnectorMetadata,
    ECCPUWorkerMetadata,
)
from vllm.distributed.ec_transfer.ec_connector.cpu.scheduler import ECCPUScheduler
from vllm.distributed.ec_transfer.ec_connector.cpu.session import (
    _CONSUMER_QUARANTINE_TIMEOUT_S,
    _CONSUMER_READ_TIMEOUT_S,
)
from vllm.distributed.ec_transfer.ec_connector.encoder_output_width import (
    get_encoder_output_width,
)
from vllm.logger import init_logger

from embedding_cache import EmbeddingCache, Lease

from .options import CacheOptions, parse_options
from .producer import LeasedProducerSession
from .version import require_supported_vllm

if TYPE_CHECKING:
    from vllm.config import VllmConfig
    from vllm.v1.core.sched.output import SchedulerOutput
    from vllm.v1.outputs import ECConnectorOutput
    from vllm.v1.request import Request

logger = init_logger(__name__)

#: How long the entry of a READ a dead peer's session dropped stays held before it
#: is discarded: a READ's own deadline plus its quarantine in vLLM (20 + 60 s), so
#: never sooner than vLLM itself would discard the same READ had its peer stayed up.
PEER_DOWN_HOLD_S = _CONSUMER_READ_TIMEOUT_S + _CONSUMER_QUARANTINE_TIMEOUT_S


class VerifiedECCPUScheduler(ECCPUScheduler):
    """``ECCPUScheduler`` with the project's ``EmbeddingCache`` and leases at the check.

    ``clock`` is the cache's clock, which the leases' deadlines are read on
    (``time.monotonic``; tests pass a fake one). Construction checks the vLLM
    version and parses ``ec_connector_extra_config["embedding_cache"]`` before
    anything else (the shared region included) is made.
    """

    def __init__(
        self, vllm_config: VllmConfig, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        require_supported_vllm()
        ec_config = vllm_config.ec_transfer_config
        if ec_config is None:
            raise ValueError("VerifiedECCPUScheduler: vllm_config.ec_transfer_config is None")
        self.options: CacheOptions = parse_options(ec_config.ec_connector_extra_config)
        self._clock = clock
        # mm_hash -> the lease its check took this step; moved to _lease_loads when
        # its load is dispatched, released at the step's end otherwise.
        self._check_leases: dict[str, Lease] = {}
        # transfer id -> (the load's lease, rank reports still outstanding), in
        # dispatch order: every lease lasts as long, so deadlines are in that order.
        self._lease_loads: dict[int, tuple[Lease, int]] = {}
        # mm_hash -> when its entry is discarded: the reads a dead peer's session
        # dropped, in the order of their deadlines (_on_peer_down, _poll_step).
        self._dropped_reads: dict[str, float] = {}
        #: The mirror of the worker's GPU encoder cache: the items whose tensors it
        #: holds once it has run the last metadata built (rules in
        #: ``_reconcile_saves``). Empty until a step's ``SchedulerOutput`` is seen.
        self.worker_keeps: set[str] = set()
        # (request id, input index) -> mm_hash of this step's allocated inputs.
        self._step_inputs: dict[tuple[str, int], str] = {}
        #: Saves the plugin did not dispatch, or dropped before the worker saw them,
        #: because the worker would never make them (its tensor kept, or its
        #: encoder input withdrawn); each such entry was discarded or never made.
        self.unmade_saves_avoided = 0
        #: Computed items larger than the whole pool: computed, never cached.
        self.oversize_items = 0
        self._verified: EmbeddingCache | None = None
        super().__init__(vllm_config)
        self._install_cache()

    @property
    def cache(self) -> EmbeddingCache:
        """The project's cache this scheduler holds (``_cache``, typed as it is)."""
        if self._verified is None:
            raise RuntimeError("VerifiedECCPUScheduler: the cache is not built yet")
        return self._verified

    def new_cache(self, num_blocks: int) -> EmbeddingCache:
        """The cache over the region's ``num_blocks``, built from ``options`` (a
        subclass may build a traced one). O(num_blocks)."""
        o = self.options
        return EmbeddingCache(
            num_blocks,
            eviction=o.eviction,
            allocator=o.allocator,
            clock=self._clock,
            admission=o.admission,
            contiguity=o.contiguity,
        )

    def _install_cache(self) -> None:
        """Put the project's cache in place of upstream's, once (before NIXL's
        producer session is given ``_cache``, when NIXL is on)."""
        if self._verified is None:
            self._verified = self.new_cache(self._region.num_blocks)
            # The project's class is a drop-in for upstream's: every call vLLM makes
            # on _cache (its NIXL sessions' included) exists with the same meaning.
            self._cache = self._verified  # type: ignore[assignment]

    def _setup_nixl(self, vllm_config: VllmConfig) -> None:
        """Upstream's setup on the project's cache; then its producer session is
        replaced by a ``LeasedProducerSession`` over the same transport, data and
        cache (built just now, it holds no grant yet)."""
        self._install_cache()
        super()._setup_nixl(vllm_config)
        built = self._producer_session
        if built is not None and not isinstance(built, LeasedProducerSession):
            self._producer_session = LeasedProducerSession(
                transport=built._transport,
                data=built._data,
                cache=self.cache,
                compat_hash=built._compat_hash,
            )

    def _start_xfer(
        self, mm_hash: str, info: dict[str, Any], size_bytes: int, shape: tuple[int, int]
    ) -> bool:
        """Upstream's start of a NIXL read; if it raises after its alloc (a missing or
        bad ``peer_port``, ``transport.connect``, the session's constructor), the entry
        it allocated is discarded, then the error goes on to upstream's admission (the
        request fails or falls back as upstream). O(1) beyond upstream's."""
        existed = self.cache.get(mm_hash) is not None
        try:
            return super()._start_xfer(mm_hash, info, size_bytes, shape)
        except Exception:
            entry = self.cache.get(mm_hash)
            if not existed and entry is not None and not entry.ready:
                self.cache.discard(mm_hash)
            raise

    def _on_peer_down(self, addr: Any) -> None:
        """Upstream's, which closes the dead peer's session and so drops its READs in
        flight or quarantined with their entries kept not-ready; each such entry is
        discarded once ``PEER_DOWN_HOLD_S`` has passed (``_poll_step``): closing
        releases the transfer handles, but NIXL's release of a READ in flight does not
        stop its DMA (docs/VLLM.md). O(the session's xfers)."""
        session = self._sessions.get(addr)
        dropped: list[str] = []
        if session is not None:
            dropped = [x.mm_hash for x in session._xfers.values() if x.transfer_handle is not None]
            dropped += [x.mm_hash for x in session._quarantined]
        super()._on_peer_down(addr)
        deadline = self._clock() + PEER_DOWN_HOLD_S
        for mm_hash in dropped:
            entry = self.cache.get(mm_hash)
            if entry is not None and not entry.ready:
                self._dropped_reads[mm_hash] = deadline

    def _poll_step(self) -> None:
        """Upstream's poll; then the entries of a dead peer's reads whose hold has
        passed are discarded. Amortized O(1) beyond upstream's: the holds are in
        order of their deadlines."""
        super()._poll_step()
        now, dropped = self._clock(), self._dropped_reads
        while dropped:
            mm_hash = next(iter(dropped))
            if dropped[mm_hash] >= now:
                return
            del dropped[mm_hash]
            entry = self.cache.get(mm_hash)
            if entry is not None and not entry.ready:
                self.cache.discard(mm_hash)

    def has_cache_item(self, identifier: str) -> bool:
        """True only while this step holds a lease on the ready entry (the load's pin)."""
        if not self._is_consumer:
            return False
        if identifier in self._pending_loads:  # loaded this step already, under its lease
            return True
        held = self._check_leases.get(identifier)
        if held is not None and held.held:
            return True
        lease = self.cache.lease(identifier, self.options.load_lease_seconds)
        if lease is None or not lease.held:
            return False
        self._check_leases[identifier] = lease
        return True

    def update_state_after_alloc(self, request: Request, index: int) -> None:
        """A checked hit: its load, from the check's lease. An item the worker keeps
        or one larger than the pool: nothing (the worker will not save it; it cannot
        be cached). Any other item: upstream's update (the producer side allocs and
        dispatches the save of a computed item). O(1) beyond upstream's."""
        feature = request.mm_features[index]
        mm_hash = feature.identifier
        self._step_inputs[(request.request_id, index)] = mm_hash
        lease = self._check_leases.pop(mm_hash, None)
        if lease is not None:
            self._dispatch_load(mm_hash, lease)
        elif mm_hash in self._pending_loads:
            return
        elif mm_hash in self.worker_keeps and self.cache.get(mm_hash) is None:
            self.unmade_saves_avoided += 1  # its tensor is on the worker: no new output
        elif self._is_producer and self._oversize(feature):
            self.oversize_items += 1
        else:
            super().update_state_after_alloc(request, index)

    def _oversize(self, feature: Any) -> bool:
        """Whether ``feature``'s output needs more blocks than the whole pool (then
        ``alloc`` would raise inside vLLM's scheduler); warns once per scheduler."""
        rows = feature.mm_position.get_num_embeds()
        width = get_encoder_output_width(self._vllm_config, feature.modality)
        needed = self._num_blocks((rows, width))
        if needed <= self._region.num_blocks:
            return False
        if self.oversize_items == 0:
            pool = self._region.num_blocks * self._region.block_size_bytes
            logger.warning(
                "EC producer: mm_hash=%s needs %d bytes (%d blocks), more than the whole "
                "pool of ec_cpu_bytes=%d (%d blocks); it is computed but not cached. "
                "Raise ec_cpu_bytes to cache items of this size.",
                feature.identifier,
                needed * self._region.block_size_bytes,
                needed,
                pool,
                self._region.num_blocks,
            )
        return True

    def _dispatch_load(self, mm_hash: str, lease: Lease) -> None:
        if not lease.held:  # it expired within the step: a step longer than the lease
            renewed = self.cache.lease(mm_hash, self.options.load_lease_seconds)
            if renewed is None or not renewed.held:
                logger.error(
                    "EC consumer: the lease on checked hit mm_hash=%s expired within the "
                    "step and the entry is gone; raise load_lease_seconds",
                    mm_hash,
                )
                return
            lease = renewed
        assert lease.shape is not None, f"EC consumer: mm_hash={mm_hash} was saved without shape"
        transfer_id = self._next_transfer_id
        self._next_transfer_id += 1
        self._pending_loads[mm_hash] = (transfer_id, list(lease.block_ids), lease.shape)
        self._lease_loads[transfer_id] = (lease, self._expected_load_reports)

    def build_connector_meta(self, scheduler_output: SchedulerOutput) -> ECCPUConnectorMetadata:
        """With NIXL on, the consumer's sessions are polled if no request polled them
        this step; then upstream's meta; then the step's check leases whose load was
        not dispatched are released, and the loads whose lease has ended are forgotten."""
        self._poll_if_idle()
        encoded = self._reconcile_saves(scheduler_output)
        meta = super().build_connector_meta(scheduler_output)
        if encoded is not None:
            self.worker_keeps.update(encoded, meta.loads)
        for lease in self._check_leases.values():
            lease.release()
        self._check_leases.clear()
        self._forget_ended_loads()
        return meta

    def _reconcile_saves(self, scheduler_output: SchedulerOutput | None) -> set[str] | None:
        """Drop the pending saves the worker will not make, discarding their
        not-ready entries; return the items the worker encodes this step.

        The worker (vLLM's V2 model runner) first drops ``free_encoder_mm_hashes``,
        then copies the step's loads in, encodes each of ``scheduled_encoder_inputs``
        it does not hold, and saves only the outputs new this step. A pending save of
        any other item is never made, so its entry would never be ready; discarded
        here, before the metadata reaches the worker, no copy into it ever starts.
        ``worker_keeps`` loses the freed items here and gains the step's encoded and
        loaded ones in ``build_connector_meta``. None (nothing done): no
        ``SchedulerOutput``. O(the step's encoder inputs + pending saves + frees)."""
        inputs, self._step_inputs = self._step_inputs, {}
        if scheduler_output is None:
            return None
        self.worker_keeps.difference_update(scheduler_output.free_encoder_mm_hashes)
        encoded = {
            inputs[(request_id, index)]
            for request_id, indices in scheduler_output.scheduled_encoder_inputs.items()
            for index in indices
            if (request_id, index) in inputs
        }
        encoded -= self.worker_keeps
        for mm_hash in [k for k in self._pending_saves if k not in encoded]:
            del self._pending_saves[mm_hash]
            entry = self.cache.get(mm_hash)
            if entry is not None and not entry.ready:
                self.cache.discard(mm_hash)
            self.unmade_saves_avoided += 1
        return encoded

    def _poll_if_idle(self) -> None:
        """With NIXL on, poll the consumer's sessions (``_poll_step``) unless a request
        did this step (``ensure_cache_available`` polls at the first): a READ that
        completes or fails then settles within a step, with or without requests."""
        nixl_consumer = self._nixl_enabled and self._is_consumer and self._transport is not None
        if nixl_consumer and self._first_in_batch:
            self._poll_step()

    def _forget_ended_loads(self) -> None:
        """Drop the loads whose lease expired (a report was lost): a report that comes
        later is stale and ignored. Amortized O(1): deadlines are in dispatch order."""
        loads = self._lease_loads
        while loads:
            transfer_id = next(iter(loads))
            if loads[transfer_id][0].held:
                return
            del loads[transfer_id]

    def update_connector_output(self, connector_output: ECConnectorOutput) -> None:
        """Upstream's (saves marked ready; it ignores transfer ids it did not pin);
        then each leased load reported by every rank releases its lease."""
        super().update_connector_output(connector_output)
        meta = connector_output.ec_connector_worker_meta
        if not isinstance(meta, ECCPUWorkerMetadata):
            return
        for transfer_id in meta.completed_loads:
            pending = self._lease_loads.get(transfer_id)
            if pending is None:  # stale, replayed, expired, or not a leased load
                continue
            lease, outstanding = pending
            if outstanding > 1:
                self._lease_loads[transfer_id] = (lease, outstanding - 1)
                continue
            del self._lease_loads[transfer_id]
            lease.release()

    def shutdown(self) -> None:
        """Release every lease the plugin holds, then upstream's shutdown."""
        for lease in self._check_leases.values():
            lease.release()
        for lease, _ in self._lease_loads.values():
            lease.release()
        self._check_leases.clear()
        self._lease_loads.clear()
        self._dropped_reads.clear()
        self.worker_keeps.clear()
        self._step_inputs.clear()
        super().shutdown()
