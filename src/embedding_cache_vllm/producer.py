"""``LeasedProducerSession``: vLLM's NIXL producer session whose grants are the cache's leases.

vLLM 0.33's ``ProducerSession`` (``.../ec_connector/cpu/session.py``) serves the
consumers' NIXL READs of this cache: a grant pins the entry (``pin_if_ready``)
and keeps its own 30 s deadline (``PRODUCER_PIN_LEASE_S``, outside the cache);
the peer's completion notification, the sweep of expired grants (run only by
``poll_step``) and ``close`` unpin it. Here the grant's pin is a lease of the
cache (``EmbeddingCache.lease(mm_hash, PRODUCER_PIN_LEASE_S)``): the cache ends
it itself at its deadline, whether or not the session is polled (spec/SPEC.md
section 12), and the session releases it on completion, on a re-grant of the
same key, and on ``close``; its sweep only forgets the grants whose lease has
ended. The session's control flow (decoding, NACKs, notifications, replies) is
vLLM's, unchanged: only what its calls on the cache mean changes, through
``GrantLeases``, the cache as the session sees it. Why: spec/PROTOCOLS.md
section 6.2; every override: docs/VLLM.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vllm.distributed.ec_transfer.ec_connector.cpu.session import (
    PRODUCER_PIN_LEASE_S,
    ProducerSession,
)
from vllm.logger import init_logger

from embedding_cache import EmbeddingCache, Lease

if TYPE_CHECKING:
    from vllm.distributed.ec_transfer.ec_connector.cpu.protocol import XferAck, XferReq

logger = init_logger(__name__)

__all__ = ["PRODUCER_PIN_LEASE_S", "GrantLeases", "LeasedProducerSession"]


def grant_key(session_id: str, mm_hash: str) -> str:
    """The key vLLM's session files a grant under (and the peer's NIXL notification
    names): ``"{session_id}:{mm_hash}"``. O(1)."""
    return f"{session_id}:{mm_hash}"


class GrantLeases:
    """The cache as ``LeasedProducerSession``'s inherited code sees it.

    ``pin_if_ready(h)`` takes ``cache.lease(h, seconds)`` (None when absent; a
    not-ready ``Lease`` holds nothing and NACKs as a not-ready entry does), and
    ``unpin(h)`` releases the lease of the grant the session has just ended: the
    one it is replacing (a re-grant of the same key), else the grant of ``h`` no
    longer in its active grants (a completion notification pops the grant, then
    unpins). ``leases`` holds one lease per active grant.
    """

    def __init__(self, cache: EmbeddingCache, seconds: float) -> None:
        self.cache = cache
        self.seconds = seconds
        #: Grant key -> its lease, for every grant the session holds.
        self.leases: dict[str, Lease] = {}
        #: mm_hash -> the keys of its grants (one per peer session).
        self.keys: dict[str, set[str]] = {}
        #: The session's active grants (its ``_active_xfers``), bound after its __init__.
        self.active: dict[str, Any] = {}
        #: The key of the grant being made, and the lease it took.
        self.granting: str | None = None
        self.taken: Lease | None = None

    def pin_if_ready(self, mm_hash: str) -> Lease | None:
        """Lease ``mm_hash`` for ``seconds``: None if absent, a not-ready lease (held
        False) if its save is in flight, else a held lease. O(log leases)."""
        lease = self.cache.lease(mm_hash, self.seconds)
        if lease is not None and lease.held:
            self.taken = lease
        return lease

    def unpin(self, mm_hash: str) -> None:
        """Release the lease of the grant of ``mm_hash`` the session has just ended.
        O(grants of mm_hash)."""
        if self.granting is not None and self.granting in self.leases:
            self.end(self.granting)  # a re-grant: the old grant of the same key
            return
        for key in self.keys.get(mm_hash, ()):
            if key not in self.active:
                self.end(key)
                return
        logger.error("EC producer: unpin of mm_hash=%s matched no leased grant", mm_hash)

    def granted(self, key: str) -> None:
        """The grant of ``key`` is over: file the lease it took under ``key`` if the
        session holds the grant, else release it. O(log leases)."""
        lease, self.taken, self.granting = self.taken, None, None
        if lease is None:
            return
        if key in self.active:
            self.leases[key] = lease
            self.keys.setdefault(lease.key, set()).add(key)
        else:  # the session raised before it filed the grant
            lease.release()

    def end(self, key: str) -> None:
        """Release the lease of grant ``key`` (a no-op on the pin if it has expired)
        and forget it. O(log leases)."""
        lease = self.leases.pop(key)
        keys = self.keys[lease.key]
        keys.discard(key)
        if not keys:
            del self.keys[lease.key]
        lease.release()


class LeasedProducerSession(ProducerSession):
    """vLLM's ``ProducerSession`` whose grants pin by the cache's leases.

    Built as vLLM builds its session (``transport``, ``data``, ``cache``,
    ``compat_hash``), with the project's cache; ``lease_seconds`` is how long a
    grant holds its entry (vLLM's ``PRODUCER_PIN_LEASE_S``, 30 s).
    """

    def __init__(
        self,
        transport: Any,
        data: Any,
        cache: EmbeddingCache,
        compat_hash: str,
        *,
        lease_seconds: float = PRODUCER_PIN_LEASE_S,
    ) -> None:
        self.grants = GrantLeases(cache, lease_seconds)
        super().__init__(transport=transport, data=data, cache=self.grants, compat_hash=compat_hash)  # type: ignore[arg-type]
        self.grants.active = self._active_xfers

    def _grant_or_nack(self, req: XferReq) -> XferAck:
        """vLLM's grant, whose pin is a lease (``GrantLeases``), filed under its key."""
        key = grant_key(req.session_id, req.mm_hash)
        self.grants.granting = key
        try:
            return super()._grant_or_nack(req)
        finally:
            self.grants.granted(key)

    def _sweep_timeouts(self) -> None:
        """Forget the grants whose lease the cache has ended (vLLM's sweep unpins at the
        session's own deadline; here the cache released the pin at the lease's).
        O(grants)."""
        self.grants.cache.expire_leases()
        for key, lease in list(self.grants.leases.items()):
            if not lease.held:
                logger.warning(
                    "EC producer: consumer did not complete NIXL READ mm_hash=%s key=%s "
                    "within the pin lease; its lease has ended",
                    lease.key,
                    key,
                )
                del self._active_xfers[key]
                self.grants.end(key)

    def close(self) -> None:
        """Release every grant's lease, then vLLM's close (which then unpins nothing and
        closes the transport). O(grants)."""
        for key in list(self.grants.leases):
            self.grants.end(key)
        self._active_xfers.clear()
        super().close()
