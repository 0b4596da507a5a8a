"""Distributed TLC's processes: how the server and its workers are configured,
started and checked before they start, and the errors of setting them up.

Configuration is by system properties:

* ``-Dtlc2.tool.distributed.TLCServer.port=P`` (both sides; default 10997):
  the RMI registry port. The server's and the workers' remote objects use
  further, anonymous TCP ports, and the server calls back into each worker.
* ``-Djava.rmi.server.hostname=H`` (both sides): the address each side puts
  into the remote references it hands out; set it to an address the other
  machines can reach (on loopback: 127.0.0.1).
* ``-Dtlc2.tool.distributed.TLCWorker.threadCount=T``: worker threads
  (default: the worker machine's cores).
"""

from __future__ import annotations

import errno
import socket
from pathlib import Path

from .process import TlcCommand, check_command

#: TLC's default RMI registry port (TLCServer.Port).
DEFAULT_PORT = 10997
#: The system property that sets the registry port (server and workers).
PORT_PROPERTY = "tlc2.tool.distributed.TLCServer.port"
#: The system property that sets a worker's thread count.
THREADS_PROPERTY = "tlc2.tool.distributed.TLCWorker.threadCount"
#: The system property naming the address put into remote references.
HOSTNAME_PROPERTY = "java.rmi.server.hostname"
#: The main classes of the server and of a worker.
SERVER_CLASS = "tlc2.tool.distributed.TLCServer"
WORKER_CLASS = "tlc2.tool.distributed.TLCWorker"


class DistributedError(RuntimeError):
    """Distributed TLC could not run (the message says why and what to do)."""


class PortInUseError(DistributedError):
    """The server's RMI port is already taken on this machine."""

    def __init__(self, port: int) -> None:
        self.port = port
        super().__init__(
            f"port {port} is already in use on this machine: another TLC server, or "
            f"another program, listens there; choose another one (--port)"
        )


class ServerUnreachableError(DistributedError):
    """A worker found no TLC server at the address within its time limit."""


class NoWorkersError(DistributedError):
    """The server got no worker within its time limit."""


class ServerStartError(DistributedError):
    """The server ended before it was ready (e.g. a parse error); holds its output."""

    def __init__(self, message: str, output: str) -> None:
        self.output = output
        super().__init__(message)


class DistributedUnsupportedError(DistributedError):
    """The model needs what this TLC build cannot check distributed."""


def port_in_use(port: int) -> bool:
    """True if a TCP listener cannot bind ``port`` on all interfaces (as the RMI
    registry does). O(1)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("", port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return True
            raise
    return False


def check_port(port: int) -> None:
    """Raise PortInUseError (naming the port) unless ``port`` is free. O(1)."""
    if not 0 < port < 65536:
        raise DistributedError(f"port {port} is not a TCP port (1..65535)")
    if port_in_use(port):
        raise PortInUseError(port)


def _properties(port: int, hostname: str | None) -> list[str]:
    """The ``-D`` options both sides need."""
    props = [f"-D{PORT_PROPERTY}={port}"]
    if hostname:
        props.append(f"-D{HOSTNAME_PROPERTY}={hostname}")
    return props


def server_process(
    spec: str,
    config: str,
    *,
    port: int,
    hostname: str | None,
    metadir: Path,
    check_deadlock: bool = True,
) -> TlcCommand:
    """A TLC server checking ``spec`` with ``config`` (run it inside the tla/
    directory); ``metadir`` is its tmpdir too. O(1)."""
    return check_command(
        spec,
        config,
        workers=None,
        metadir=metadir,
        check_deadlock=check_deadlock,
        main_class=SERVER_CLASS,
        properties=_properties(port, hostname),
    )


def worker_process(
    server: str, *, port: int, hostname: str | None, threads: int | None, tmpdir: Path
) -> TlcCommand:
    """A TLC worker joining the server at ``server``, in its own ``tmpdir``. O(1)."""
    props = _properties(port, hostname)
    if threads is not None:
        props.append(f"-D{THREADS_PROPERTY}={threads}")
    return TlcCommand(WORKER_CLASS, (server,), tmpdir, tuple(props))
