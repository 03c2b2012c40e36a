"""An HTTP/1.1 server for the test site, on stage 2's loop.

``tcp.py`` gives each connection a task; here that task speaks HTTP.
It reads requests, asks the site (``shared.testsite.site.Site``, which does no I/O)
for each answer, and writes the answers back in order: several requests on
one connection (keep-alive), several sent before the first answer
(pipelining), ``HEAD``, and an HTTP/1.0 client's connection closed after
its answer.  Parsing HTTP is not this chapter's lesson, so it is left to
h11, a sans-IO HTTP/1.1 library: we feed it bytes, it hands back events.

What a real server must also survive is handled here: a malformed request
gets 400, a request head over ``max_head_size`` 431, an unknown method
501, and the server goes on serving others.  A client that sends nothing,
or dribbles its request a byte at a time, is cut off after
``idle_timeout`` seconds (a timer on the loop's heap, through
``wait_for``).  A client that stops reading cannot make the server buffer
without limit: the task waits in ``drain`` once the writer holds more than
its high-water mark, and gives up after the same timeout.

Left out compared with a production server: request bodies are read and
dropped (the site has no use for them), no chunked responses, no TLS, no
``Expect: 100-continue``, no graceful drain of keep-alive connections on
shutdown (they are closed).
"""

from __future__ import annotations

import dataclasses
import email.utils
import functools
import http
import logging
import signal
import socket
import threading
import time
import types
from collections.abc import Callable, Generator
from types import TracebackType
from typing import Any, Self

import h11

from shared.testsite.site import Request, Response, Site, announce, text_response
from stage2_generators.events import get_running_loop
from stage2_generators.loop import run
from stage2_generators.server.streams import StreamReader, StreamWriter
from stage2_generators.server.tcp import ClientConnected, Server, start_server
from stage2_generators.tasks import sleep, wait_for

LOGGER = logging.getLogger("stage2_generators")
KNOWN_METHODS = {"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"}
SERVER_NAME = "stage2_generators"
# h11 checks the size of a request head only while the head is incomplete,
# so it is fed in small pieces: a head over max_head_size is caught before
# more than this many further bytes have been handed over.
FEED_SIZE = 4096


@dataclasses.dataclass(frozen=True)
class Limits:
    """How long a client may stay silent, and how big a request head may be."""

    idle_timeout: float = 15.0  # Seconds for a whole exchange: request in, answer out.
    # Bytes of a request line and headers: more gets 431 (up to FEED_SIZE more may pass).
    max_head_size: int = 16 * 1024


# --8<-- [start:connection]
def site_handler(site: Site, limits: Limits = Limits()) -> ClientConnected:
    """Return the ``client_connected`` callback that serves ``site``."""
    return lambda reader, writer: serve_connection(site, reader, writer, limits)


@types.coroutine
def serve_connection(
    site: Site, reader: StreamReader, writer: StreamWriter, limits: Limits
) -> Generator[Any, None, None]:
    """Answer the requests of one connection, in order, until it ends."""
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=limits.max_head_size)
    try:
        # One timer per exchange: a client that is silent, or sends its
        # request a byte at a time, or stops reading, runs out of time.
        while (yield from wait_for(exchange(site, conn, reader, writer), limits.idle_timeout)):
            conn.start_next_cycle()
    except h11.RemoteProtocolError as error:
        send_error(conn, writer, error.error_status_hint, str(error))
    except (TimeoutError, ConnectionError):
        writer.abort()  # Too slow, or gone: nothing more to say to this client.


@types.coroutine
def exchange(
    site: Site, conn: h11.Connection, reader: StreamReader, writer: StreamWriter
) -> Generator[Any, None, bool]:
    """Read one request, answer it, wait until the answer is on its way; False: stop."""
    request = yield from receive_request(conn, reader)
    if request is None:
        return False  # The client closed the connection between requests.
    response = yield from answer(site, request)
    writer.write(response_bytes(conn, request.method, response))
    yield from writer.drain()  # Back-pressure: waits while the client lags behind.
    return conn.our_state is not h11.MUST_CLOSE  # Else HTTP/1.0, or "Connection: close".


# --8<-- [end:connection]


# --8<-- [start:receive]
@types.coroutine
def receive_request(
    conn: h11.Connection, reader: StreamReader
) -> Generator[Any, None, h11.Request | None]:
    """Return the next whole request (its body read and dropped), None at the end.

    Raises h11.RemoteProtocolError when the bytes are not HTTP.
    """
    request = None
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data((yield from reader.read(FEED_SIZE)))  # b"": the end.
        elif isinstance(event, h11.Request):
            request = event
        elif isinstance(event, h11.EndOfMessage):
            return request
        elif isinstance(event, h11.ConnectionClosed):
            return None
        # h11.Data: a piece of a request body, which the site has no use for.


# --8<-- [end:receive]


# --8<-- [start:answer]
@types.coroutine
def answer(site: Site, request: h11.Request) -> Generator[Any, None, Response]:
    """Return the site's answer to ``request``, after the site's latency."""
    method = request.method.decode("ascii")
    if method not in KNOWN_METHODS:
        return text_response(501, "501: Not Implemented")
    host = next((value for name, value in request.headers if name == b"host"), b"")
    target = request.target.decode("ascii")  # h11 lets only ASCII through.
    with site.counters.counting(target):
        if site.latency > 0:
            yield from sleep(site.latency)
        try:
            headers = {
                name.decode("ascii"): value.decode("latin-1") for name, value in request.headers
            }
            site_request = Request(method, target, host.decode("ascii", "replace"), headers=headers)
            return site.respond(site_request)
        except Exception:  # A bug in a page: the client gets a 500, the server goes on.
            LOGGER.exception("the site failed to answer %s %s", method, target)
            return text_response(500, "500: Internal Server Error")


def response_bytes(conn: h11.Connection, method: bytes, response: Response) -> bytes:
    """Return the bytes of ``response`` on ``conn``; HEAD gets the head alone."""
    headers = [(name, value) for name, value in response.headers.items()]
    headers += [
        ("Content-Length", str(len(response.body))),
        ("Date", http_date(int(time.time()))),
        ("Server", SERVER_NAME),
    ]
    data = conn.send(
        h11.Response(status_code=response.status, headers=headers, reason=reason(response.status))
    )
    if method != b"HEAD" and response.body:
        data += conn.send(h11.Data(data=response.body))
    return data + conn.send(h11.EndOfMessage())


@functools.cache
def reason(status: int) -> bytes:
    """Return the reason phrase of ``status``, empty for a status without one."""
    try:
        return http.HTTPStatus(status).phrase.encode()
    except ValueError:
        return b""


@functools.lru_cache(maxsize=1)
def http_date(second: int) -> str:
    """Return the Date header of ``second``: written once a second, not once a request."""
    return email.utils.formatdate(second, usegmt=True)


def send_error(conn: h11.Connection, writer: StreamWriter, status: int, why: str) -> None:
    """Answer a request that could not be read with ``status``, then close."""
    if conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
        LOGGER.info("answering %d to a bad request: %s", status, why)
        response = text_response(status, f"{status}: {reason(status).decode()}")
        writer.write(response_bytes(conn, b"GET", response))
    writer.close()


# --8<-- [end:answer]


# --8<-- [start:serve]
@types.coroutine
def serve_site(
    site: Site,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    limits: Limits = Limits(),
    backlog: int = 4096,
    handler: Callable[[Site, Limits], ClientConnected] = site_handler,
) -> Generator[Any, None, Server]:
    """Start serving ``site`` with ``handler``'s callback; return the Server.  Raises OSError."""
    return (yield from start_server(handler(site, limits), host, port, backlog=backlog))


@types.coroutine
def serve_until_interrupted(
    site: Site, host: str, port: int, listening: Callable[[int], object]
) -> Generator[Any, None, None]:
    """Serve ``site`` until Ctrl+C, calling ``listening(port)`` once it listens.

    Ctrl+C must not raise KeyboardInterrupt in whatever task happens to run:
    the signal only writes a byte to a socket that the loop watches (the
    "self-pipe"), and the server then shuts down in order.
    """
    wake_here, wake_there = socket.socketpair()
    wake_here.setblocking(False)
    wake_there.setblocking(False)
    old_wakeup = signal.set_wakeup_fd(wake_there.fileno())
    old_handler = signal.signal(signal.SIGINT, lambda signum, frame: None)
    try:
        server = yield from serve_site(site, host, port)
        listening(server.sockets[0].getsockname()[1])
        try:
            yield from get_running_loop().sock_recv(wake_here, 1)  # Until Ctrl+C.
        finally:
            server.close()
            server.close_clients()  # Keep-alive connections would otherwise hold on.
            yield from server.wait_closed()
    finally:
        signal.signal(signal.SIGINT, old_handler)
        signal.set_wakeup_fd(old_wakeup)
        wake_here.close()
        wake_there.close()


# --8<-- [end:serve]


def serve_with_generators(site: Site, host: str, port: int) -> None:
    """Serve ``site`` until Ctrl+C: what ``python -m stage2_generators.server`` runs."""
    run(serve_until_interrupted(site, host, port, lambda bound: announce(site.pages, host, bound)))


class SiteServerThread:
    """A context manager that serves a ``Site`` with this server from a thread.

    The counterpart of ``shared.testsite.server.ServerThread`` (which serves it with
    aiohttp).  Stage 2's loop cannot be called from another thread, so the
    thread's loop also watches one end of a socket pair: ``__exit__`` sends
    a byte on the other, and the server shuts down.  Raises OSError from
    ``__enter__`` when the port cannot be bound.  ``handler`` makes the
    callback that serves a connection (the benchmark passes step 6's).
    """

    def __init__(
        self,
        site: Site,
        host: str = "127.0.0.1",
        port: int = 0,
        limits: Limits = Limits(),
        handler: Callable[[Site, Limits], ClientConnected] = site_handler,
    ) -> None:
        self.site = site
        self.handler = handler
        self.host = host
        self.port = port
        self.limits = limits
        self.server: Server | None = None
        self._listening = threading.Event()
        self._error: BaseException | None = None
        self._stop_here, self._stop_there = socket.socketpair()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def url(self) -> str:
        """The root URL of the running server, with a trailing slash."""
        return f"http://{self.host}:{self.port}/"

    def __enter__(self) -> Self:
        self._thread.start()
        self._listening.wait(30)
        if self._error is not None or self.server is None:
            self._finish()
            raise self._error or RuntimeError("the server did not start within 30 seconds")
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop_there.send(b"x")
        self._finish()

    def _finish(self) -> None:
        self._thread.join(30)
        self._stop_here.close()
        self._stop_there.close()

    def _run(self) -> None:
        try:
            run(self._serve())
        except BaseException as error:  # Handed to __enter__ (a port in use, say).
            self._error = error
        finally:
            self._listening.set()

    @types.coroutine
    def _serve(self) -> Generator[Any, None, None]:
        """Serve until a byte arrives on the socket pair, then close everything."""
        self.server = yield from serve_site(
            self.site, self.host, self.port, limits=self.limits, handler=self.handler
        )
        self.port = self.server.sockets[0].getsockname()[1]
        self._listening.set()
        self._stop_here.setblocking(False)
        try:
            yield from get_running_loop().sock_recv(self._stop_here, 1)
        finally:
            self.server.close()
            self.server.close_clients()
            yield from self.server.wait_closed()
