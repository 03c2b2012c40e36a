"""A TCP server on stage 2's loop: accept connections, one task for each.

The crawler only connects; a server listens.  ``start_server`` binds a
listening socket and starts one task that accepts connections in a loop
(``EventLoop.sock_accept``); for each connection it makes a reader and a
writer (``streams.py``) and starts a new task running the caller's
``client_connected(reader, writer)``.  Each conversation then reads top to
bottom, like a fetch in the crawler, however many clients talk at once.

The names and the behaviour are those of ``asyncio.start_server`` and
``asyncio.Server``, including ``close_clients`` (Python 3.13).  Left out:
several listening sockets (one host, one address family), Unix sockets,
TLS, ``start_serving=False``, and ``async with server``.  Different: when
``client_connected`` returns, the writer is closed (asyncio leaves it to
the garbage collector).
"""

from __future__ import annotations

import errno
import logging
import socket
import types
from collections.abc import Callable, Generator
from typing import Any

from stage2_generators.events import get_running_loop
from stage2_generators.futures import CancelledError, Future
from stage2_generators.server.streams import DEFAULT_LIMIT, StreamReader, StreamWriter
from stage2_generators.tasks import Task, current_task, sleep

LOGGER = logging.getLogger("stage2_generators")
ACCEPT_RETRY_DELAY = 1.0  # Seconds to pause accepting after an error not of one connection.
# Errors of the one connection being accepted, which Linux's accept() passes
# on (its manual, "Error handling"): that client is gone or was refused, the
# next one may be fine.  ENONET is Linux's own.
CONNECTION_ERRORS = {
    errno.ECONNABORTED, errno.EPERM, errno.EPROTO, errno.ENETDOWN, errno.ENOPROTOOPT,
    errno.EHOSTDOWN, getattr(errno, "ENONET", errno.ENETDOWN), errno.EHOSTUNREACH,
    errno.EOPNOTSUPP, errno.ENETUNREACH,
}  # fmt: skip
# Out of file descriptors or memory: wait for some to be freed.
RESOURCE_ERRORS = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}
ClientConnected = Callable[[StreamReader, StreamWriter], Any]


# --8<-- [start:server]
class Server:
    """A listening socket, the task that accepts on it, and one task per client."""

    def __init__(
        self, sock: socket.socket, client_connected: ClientConnected, limit: int = DEFAULT_LIMIT
    ) -> None:
        self._sock = sock
        self._client_connected = client_connected
        self._limit = limit
        self._loop = get_running_loop()
        self._clients: dict[Task, StreamWriter] = {}
        self.accept_retry_delay = ACCEPT_RETRY_DELAY
        self._closed = self._loop.create_future()  # Done once closed and no client is left.
        self._accepting = self._loop.create_task(self._accept_loop())
        self._accepting.add_done_callback(self._accepting_done)

    @property
    def sockets(self) -> tuple[socket.socket, ...]:
        """The listening socket, in a tuple as asyncio has it (empty once closed)."""
        return () if self._sock.fileno() == -1 else (self._sock,)

    def is_serving(self) -> bool:
        """Tell whether the server still accepts connections."""
        return not self._accepting.done()

    @types.coroutine
    def _accept_loop(self) -> Generator[Any, None, None]:
        """Accept connections until cancelled, starting a task for each."""
        try:
            while True:
                try:
                    conn, _ = yield from self._loop.sock_accept(self._sock)
                except OSError as error:  # Logged: a server goes on accepting.
                    yield from self._accept_failed(error)
                    continue
                writer = StreamWriter(conn)
                task = self._loop.create_task(self._serve(StreamReader(conn, self._limit), writer))
                self._clients[task] = writer
        finally:
            self._sock.close()  # Only now: the accept loop no longer watches it.

    @types.coroutine
    def _accept_failed(self, error: OSError) -> Generator[Any, None, None]:
        """Log why accept() failed; pause, unless only that one connection failed.

        Raises ``error`` again if the listening socket itself was closed.
        """
        if self._sock.fileno() == -1:
            raise error
        if error.errno in CONNECTION_ERRORS:
            LOGGER.info("a connection failed before it was accepted: %s", error)
            return
        if error.errno in RESOURCE_ERRORS:
            LOGGER.error("cannot accept a connection: %s", error)
        else:  # Unexpected: reported with its traceback, as a bug would be.
            message = "accept() failed; the server goes on accepting"
            self._loop.call_exception_handler({"message": message, "exception": error})
        yield from sleep(self.accept_retry_delay)  # Do not spin while the cause lasts.

    # --8<-- [end:server]

    # --8<-- [start:serve]
    @types.coroutine
    def _serve(self, reader: StreamReader, writer: StreamWriter) -> Generator[Any, None, None]:
        """Run ``client_connected`` for one connection, then close the connection."""
        try:
            yield from self._client_connected(reader, writer)
        except CancelledError:
            writer.abort()  # close_clients() or shutdown: do not wait to send.
            raise
        except Exception as error:
            message = "unhandled exception in client_connected"
            self._loop.call_exception_handler({"message": message, "exception": error})
        finally:
            writer.close()
            del self._clients[current_task()]  # type: ignore[arg-type]
            self._check_closed()

    # --8<-- [end:serve]

    # --8<-- [start:close]
    def close(self) -> None:
        """Stop accepting; the connections already open go on."""
        self._accepting.cancel()

    def close_clients(self) -> None:
        """Cancel the task of every open connection, which closes it."""
        for task in list(self._clients):
            task.cancel()

    def _accepting_done(self, task: Future) -> None:
        """Report why accepting stopped, if not by close(); the server may now be closed."""
        if not task.cancelled() and task.exception() is not None:
            message = "the server stopped accepting connections"
            self._loop.call_exception_handler({"message": message, "exception": task.exception()})
        self._check_closed()

    def _check_closed(self) -> None:
        """Mark the server closed once it stopped accepting and no client is left."""
        if self._accepting.done() and not self._clients and not self._closed.done():
            self._closed.set_result(None)

    @types.coroutine
    def wait_closed(self) -> Generator[Any, None, None]:
        """Wait until the server is closed and every connection has ended."""
        if not self._closed.done():
            yield from self._closed

    @types.coroutine
    def serve_forever(self) -> Generator[Any, None, None]:
        """Serve until cancelled; then close the server and wait for it."""
        try:
            yield from self._loop.create_future()  # Nothing sets it: only a cancel ends this.
        finally:
            self.close()
            yield from self.wait_closed()

    # --8<-- [end:close]


# --8<-- [start:start_server]
@types.coroutine
def start_server(
    client_connected: ClientConnected,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    limit: int = DEFAULT_LIMIT,
    backlog: int = 100,
) -> Generator[Any, None, Server]:
    """Listen on ``host``:``port`` and serve each connection with ``client_connected``.

    ``client_connected(reader, writer)`` must return a coroutine; port 0
    lets the system pick one (see ``server.sockets[0].getsockname()``).
    Raises OSError when the address cannot be bound.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family, backlog=backlog)
    sock.setblocking(False)
    return Server(sock, client_connected, limit)
    yield  # Unreached: it makes this a generator, awaited as asyncio's start_server is.


# --8<-- [end:start_server]
