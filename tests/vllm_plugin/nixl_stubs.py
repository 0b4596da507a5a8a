"""NIXL's transports stubbed, so vLLM's real NIXL code runs here (the ``nixl`` package
is absent): vLLM 0.33's ``ECCPUScheduler``/``ConsumerSession``/``ProducerSession``
run unchanged on the transports below; only the ZMQ control channel and the NIXL
data plane are replaced.

- ``ClientTransport``/``Connection``: the consumer's ZMQ side (``connect``,
  ``poll``, ``poll_dead``, ``remove``); the test queues the producer's replies
  (``reply``) and the peers that went down (``dead``).
- ``ConsumerData``: the consumer's NIXL data plane; ``state`` is what
  ``check_xfer_state`` reports for every READ ("PROC", "DONE" or an error).
- ``ServerTransport``/``ProducerData``: the producer's ZMQ and NIXL sides; the
  test queues the consumers' requests (``request``) and READ notifications
  (``notify``).
- ``nixl_consumer``: a consumer scheduler of a harness kind with NIXL's fields set
  as ``_setup_nixl`` sets them, on these stubs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec
from plugin_calls import request, scheduler

from embedding_cache_checker.engine import FakeClock

#: The one producer every announcement names.
PEER = ("producer", 5601)
#: A row is a block (``engine.stubs``: width 16, float16): 32 bytes.
ROW_BYTES = 32


@dataclass
class Connection:
    """A DEALER connection: what the session sent."""

    sent: list[bytes] = field(default_factory=list)

    def send(self, payload: bytes) -> None:
        self.sent.append(payload)


@dataclass
class ClientTransport:
    """The consumer's ZMQ transport; ``refuse`` makes ``connect`` raise."""

    refuse: bool = False
    incoming: dict[Any, list[bytes]] = field(default_factory=dict)
    dead: list[Any] = field(default_factory=list)
    removed: list[Any] = field(default_factory=list)
    connections: dict[Any, Connection] = field(default_factory=dict)

    def connect(self, addr: Any) -> Connection:
        if self.refuse:
            raise ConnectionRefusedError(f"{addr}: connection refused")
        return self.connections.setdefault(addr, Connection())

    def poll(self) -> dict[Any, list[bytes]]:
        messages, self.incoming = self.incoming, {}
        return messages

    def poll_dead(self) -> list[Any]:
        dead, self.dead = self.dead, []
        return dead

    def remove(self, addr: Any) -> None:
        self.removed.append(addr)
        self.connections.pop(addr, None)

    def close(self) -> None:
        pass

    def reply(self, addr: Any, ack: Any) -> None:
        """Queue the producer's ``XferAck`` for the next poll."""
        self.incoming.setdefault(addr, []).append(msgspec.msgpack.encode(ack))


@dataclass
class ConsumerData:
    """The consumer's NIXL data plane: each READ posted gets a handle."""

    state: str = "PROC"
    posted: list[Any] = field(default_factory=list)
    released: list[Any] = field(default_factory=list)

    def add_remote_peer(self, _metadata: bytes, _mem_descriptor: bytes) -> str:
        return "producer-agent"

    def remove_remote_peer(self, _agent_name: str) -> None:
        pass

    def post_read(
        self,
        local_indices: list[int],
        _agent_name: str,
        remote_indices: list[int],
        **_notif_msg: bytes,
    ) -> Any:
        assert len(local_indices) == len(remote_indices)  # as NIXL's transport checks
        handle = ("read", len(self.posted))
        self.posted.append(handle)
        return handle

    def check_xfer_state(self, handle: Any) -> str:
        return self.state

    def release_xfer_handle(self, handle: Any) -> None:
        self.released.append(handle)

    def deregister(self) -> None:
        pass


def nixl_consumer(kind: str, clock: FakeClock | None = None, **transport: Any) -> Any:
    """A consumer scheduler of ``kind`` over 8 blocks with NIXL on, on the stubs
    (``_transport``, ``_data``, ``_compat_hash``, ``_ack_timeout_s``, as
    ``_setup_nixl`` sets them)."""
    sched = scheduler(kind, num_blocks=8, clock=clock, role="ec_consumer")
    sched._nixl_enabled = True
    sched._transport = ClientTransport(**transport)
    sched._data = ConsumerData()
    sched._compat_hash = "compat"
    sched._ack_timeout_s = 30.0
    return sched


def announced(request_id: str, key: str, rows: int, **fields: Any) -> Any:
    """A request for ``key`` (``rows`` rows) that a remote producer announced:
    ``ec_transfer_params`` with ``peer_host``, ``peer_port`` (None: left out),
    ``size_bytes`` and ``shape``, as vLLM's producer publishes them."""
    info: dict[str, Any] = {
        "peer_host": PEER[0],
        "peer_port": PEER[1],
        "size_bytes": rows * ROW_BYTES,
        "shape": [rows, 16],
    }
    info.update(fields)
    req = request(request_id, (key, rows))
    req.ec_transfer_params = {key: {k: v for k, v in info.items() if v is not None}}
    return req


def ack_ok(sched: Any, key: str, rows: int) -> None:
    """The producer grants ``key``'s read: its ``XferAck`` arrives at the next poll."""
    from vllm.distributed.ec_transfer.ec_connector.cpu.protocol import XferAck, XferStatus

    ack = XferAck(
        mm_hash=key,
        status=XferStatus.OK,
        session_id=sched._sessions[PEER]._session_id,
        src_block_indices=list(range(rows)),
        agent_metadata=b"agent",
        mem_descriptor=b"blocks",
    )
    sched._transport.reply(PEER, ack)


@dataclass
class ServerTransport:
    """The producer's ZMQ ROUTER: consumers' requests in, replies out."""

    incoming: list[tuple[bytes, bytes]] = field(default_factory=list)
    replies: list[tuple[bytes, Any]] = field(default_factory=list)
    closed: bool = False

    def poll(self, timeout_ms: int = 0) -> list[tuple[bytes, bytes]]:
        assert timeout_ms == 0  # the session's poll_step never blocks
        messages, self.incoming = self.incoming, []
        return messages

    def send(self, identity: bytes, payload: bytes) -> None:
        from vllm.distributed.ec_transfer.ec_connector.cpu.protocol import XferAck

        self.replies.append((identity, msgspec.msgpack.decode(payload, type=XferAck)))

    def close(self) -> None:
        self.closed = True

    def request(self, session_id: str, key: str, compat: str = "compat") -> None:
        """Queue a consumer's ``XferReq`` for ``key`` from session ``session_id``."""
        from vllm.distributed.ec_transfer.ec_connector.cpu.protocol import XferReq

        req = XferReq(mm_hash=key, compatibility_hash=compat, session_id=session_id)
        self.incoming.append((session_id.encode(), msgspec.msgpack.encode(req)))


@dataclass
class ProducerData:
    """The producer's NIXL data plane: its metadata, and the READs' notifications."""

    notifs: dict[str, list[bytes]] = field(default_factory=dict)

    def get_agent_metadata(self) -> bytes:
        return b"agent"

    def get_mem_descriptor(self) -> bytes:
        return b"blocks"

    def get_new_notifs(self) -> dict[str, list[bytes]]:
        notifs, self.notifs = self.notifs, {}
        return notifs

    def notify(self, session_id: str, key: str) -> None:
        """The consumer's READ of ``key`` completed: NIXL notifies the producer."""
        self.notifs.setdefault("consumer-agent", []).append(f"{session_id}:{key}".encode())
