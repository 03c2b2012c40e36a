"""An HTTP/1.1 server for the test site, on stage 2's loop.

``tcp.py`` gives each connection a task; here that task speaks HTTP.
It reads requests, asks the site (``shared.testsite.site.Site``, which does no I/O)
for each answer, and writes the answers back in order: several requests on
one connection (keep-alive), several sent before the first answer
(pipelining), ``HEAD``, and an HTTP/1.0 client's connection closed after
its answer.  Parsing HTTP is not this chapter's lesson, so it is left to
llhttp, the C parser of Node.js and aiohttp, through httptools: we feed
it bytes and it calls our ``on_*`` methods as it finds each part of a
request.  We write the head of each answer ourselves.

What a real server must also survive is handled here: a malformed request
gets 400 (so does one without a single valid ``Host``), a target over
``max_head_size`` 414, a whole request head over it 431, an unknown method
or transfer coding 501, an HTTP version other than 1.0 and 1.1 505, and
the server goes on serving others.  The tests hold it to each server-side
MUST of RFC 9112, byte by byte, and one llhttp cannot meet is said below
(``RequestParser``).  A request whose head asks for ``Expect:
100-continue`` gets a ``100 Continue`` before its body is read (RFC 9110,
section 10.1.1).  A client that sends nothing, or dribbles its request a
byte at a time, is cut off after ``idle_timeout`` seconds (a timer on the
loop's heap, through ``wait_for``).  A client that stops reading cannot
make the server buffer without limit: the task waits in ``drain`` once
the writer holds more than its high-water mark, and gives up after the
same timeout.

Left out compared with a production server: request bodies are read and
dropped (the site has no use for them), no chunked responses, no TLS, no
417 for an expectation it does not know, no protocol upgrade (the request
is answered, then the connection closed), no graceful drain of keep-alive
connections on shutdown (they are closed).
"""

from __future__ import annotations

import collections
import dataclasses
import email.utils
import functools
import http
import logging
import re
import signal
import socket
import threading
import time
import types
import urllib.parse
from collections.abc import Callable, Generator
from types import TracebackType
from typing import Any, NoReturn, Self

import httptools

from shared.testsite.site import Request, Response, Site, announce, text_response
from stage2_generators.events import get_running_loop
from stage2_generators.loop import run
from stage2_generators.server.streams import RECV_SIZE, StreamReader, StreamWriter
from stage2_generators.server.tcp import ClientConnected, Server, start_server
from stage2_generators.tasks import sleep, wait_for

LOGGER = logging.getLogger("stage2_generators")
KNOWN_METHODS = {"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"}
SERVER_NAME = "stage2_generators"
# A line shaped like "METHOD target HTTP/1.1": what a request with a method
# llhttp does not know looks like, unlike bytes that are not HTTP at all.
REQUEST_LINE = re.compile(rb"^([!#$%&'*+.^_`|~0-9A-Za-z-]+) \S+ HTTP/\d\.\d\r?$", re.MULTILINE)
# A Host value: a name, an IPv4 address or a bracketed IPv6 one, then an
# optional port (RFC 9112, section 3.2, with RFC 3986's uri-host).
HOST = re.compile(
    r"(?:\[[0-9A-Za-z:._~!$&'()*+,;=-]+\]"  # [IPv6]
    r"|(?:[0-9A-Za-z._~!$&'()*+,;=-]|%[0-9A-Fa-f]{2})*)"  # A name or IPv4.
    r"(?::[0-9]*)?"  # The port.
)
# The interim answer to "Expect: 100-continue": send the body (RFC 9110, 15.2.1).
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
# Statuses whose answers have no body, and so no Content-Length to send.
NO_BODY = frozenset({204, 304})


@dataclasses.dataclass(frozen=True)
class Limits:
    """How long a client may stay silent, and how big a request head may be."""

    idle_timeout: float = 15.0  # Seconds for a whole exchange: request in, answer out.
    # Bytes of a request line and headers: more gets 431.  One header still
    # arriving is counted read by read, so up to one read more may pass.
    max_head_size: int = 16 * 1024


class BadRequest(Exception):
    """The client sent bytes this server will not answer as a request."""

    def __init__(self, status: int) -> None:
        super().__init__(f"{status} {reason(status).decode()}")
        self.status = status


# --8<-- [start:connection]
def site_handler(site: Site, limits: Limits = Limits()) -> ClientConnected:
    """Return the ``client_connected`` callback that serves ``site``."""
    return lambda reader, writer: serve_connection(site, reader, writer, limits)


@types.coroutine
def serve_connection(
    site: Site, reader: StreamReader, writer: StreamWriter, limits: Limits
) -> Generator[Any, None, None]:
    """Answer the requests of one connection, in order, until it ends."""
    parser = RequestParser(limits.max_head_size)
    try:
        # One timer per exchange: a client that is silent, or sends its
        # request a byte at a time, or stops reading, runs out of time.
        while (yield from wait_for(exchange(site, parser, reader, writer), limits.idle_timeout)):
            pass
    except BadRequest as error:
        send_error(writer, error.status)
    except (TimeoutError, ConnectionError):
        writer.abort()  # Too slow, or gone: nothing more to say to this client.


@types.coroutine
def exchange(
    site: Site, parser: RequestParser, reader: StreamReader, writer: StreamWriter
) -> Generator[Any, None, bool]:
    """Read one request, answer it, wait until the answer is on its way; False: stop."""
    asked = yield from receive_request(parser, reader, writer)
    if asked is None:
        return False  # The client closed the connection between requests.
    response = yield from answer(site, asked)
    writer.write(response_bytes(response, asked.method, asked.keep_alive))
    yield from writer.drain()  # Back-pressure: waits while the client lags behind.
    return asked.keep_alive  # Else HTTP/1.0, or "Connection: close".


# --8<-- [end:connection]


# --8<-- [start:receive]
@types.coroutine
def receive_request(
    parser: RequestParser, reader: StreamReader, writer: StreamWriter | None = None
) -> Generator[Any, None, Asked | None]:
    """Return the next whole request, None at the end.

    A request whose head asks for it gets ``100 Continue`` on ``writer``
    before its body is read.  Raises BadRequest, once the requests before
    it are answered, when the bytes are not a request this server answers.
    """
    while not parser.requests:  # Pipelined requests are already there.
        if parser.refused:
            raise BadRequest(parser.refused)
        if parser.continue_asked and writer is not None:  # After earlier answers.
            parser.continue_asked = False
            writer.write(CONTINUE)
        data = yield from reader.read(RECV_SIZE)
        if not data:
            return None  # The end (a half-sent request gets no answer).
        parser.feed(data)
    return parser.requests.popleft()


@dataclasses.dataclass
class Asked:
    """One whole request, as the parser found it."""

    method: str
    target: str  # Its path and query.
    host: str  # From the target when it names one, else from Host.
    headers: dict[str, str]  # Lower-case names.
    keep_alive: bool  # False: answer, then close the connection.


class RequestParser:
    """Turn the bytes of one connection into whole requests, with llhttp.

    httptools calls the ``on_*`` methods below as llhttp finds the parts
    of a request; the body, which the site has no use for, is dropped.

    One MUST of RFC 9112 this server cannot meet through llhttp: a chunk
    extension may have whitespace around its ``;`` and ``=`` (the BWS of
    section 7.1.1), and an extension the server does not know must be
    ignored.  llhttp takes whitespace between the chunk size and ``;``
    only when told to (``lenient_spaces_after_chunk_size``, set below), and
    it refuses whitespace after ``;`` or around ``=`` whatever it is told:
    such a request gets 400.  Meeting it would mean finding where each
    chunk's line starts, that is, parsing the chunked body ourselves.
    """

    def __init__(self, max_head_size: int) -> None:
        self.parser = httptools.HttpRequestParser(self)
        # "5 ;ext" is a 5-byte chunk to RFC 9112, and now to llhttp.  (httptools
        # calls each leniency dangerous: a proxy and a server that read one
        # line two ways disagree on where a body ends.  Read as the RFC
        # reads it, this one agrees.)
        self.parser.set_dangerous_leniencies(lenient_spaces_after_chunk_size=True)
        self.max_head_size = max_head_size
        self.requests: collections.deque[Asked] = collections.deque()
        self.refused = 0  # The status to answer once the bytes are not a request.
        self.target = ""  # Of the request being read...
        self.headers: dict[str, str] = {}  # ...its headers so far...
        self.head_size = 0  # ...and the bytes of its head so far.
        self.continue_asked = False  # Its head asks for 100 Continue; no body yet.
        # Bytes fed since llhttp last called us: httptools keeps a header
        # that is still arriving to itself, so this is how one endless
        # header is counted.
        self.unreported = 0

    def feed(self, data: bytes) -> None:
        """Parse ``data``: whole requests go to ``requests``; bad ones set ``refused``."""
        self.unreported += len(data)
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:  # WebSocket or CONNECT: not HTTP after this.
            if self.requests:
                self.requests[-1].keep_alive = False
        except httptools.HttpParserInvalidMethodError:
            self.refused = method_status(data)
        except httptools.HttpParserError:  # Set already if one of our on_* stopped llhttp.
            self.refused = self.refused or 400
        if self.unreported > self.max_head_size and not self.refused:
            self.refused = 431  # A header that never ends.

    def refuse(self, status: int) -> NoReturn:
        """Stop llhttp: this request is answered with ``status``, then the connection closed."""
        self.refused = status
        raise BadRequest(status)  # httptools turns it into HttpParserCallbackError.

    def count_head(self, size: int) -> None:
        """Add ``size`` bytes to the request head.  Raises BadRequest when over the limit."""
        self.head_size += size
        self.unreported = 0
        if self.head_size > self.max_head_size:
            self.refuse(431)

    def on_message_begin(self) -> None:
        self.target, self.headers, self.head_size, self.unreported = "", {}, 0, 0
        self.continue_asked = False

    def on_url(self, url: bytes) -> None:
        self.target += url.decode("latin-1")  # A long target may come in pieces.
        if len(self.target) > self.max_head_size:
            self.refuse(414)  # URI Too Long: RFC 9112, section 3.
        self.count_head(len(url))

    def on_header(self, name: bytes, value: bytes) -> None:
        key, text = name.decode("latin-1").lower(), value.decode("latin-1")
        if key in self.headers:
            if key == "host":
                self.refuse(400)  # One Host only (RFC 9112, section 3.2).
            text = f"{self.headers[key]}, {text}"  # Repeated lines make one list.
        self.headers[key] = text
        self.count_head(len(name) + len(value) + 4)  # With ": " and the line's end.

    def on_headers_complete(self) -> None:
        self.unreported = 0
        version = self.parser.get_http_version()
        if version not in ("1.0", "1.1"):
            self.refuse(505)
        host = self.headers.get("host")
        if host is None and version == "1.1" or host is not None and not HOST.fullmatch(host):
            self.refuse(400)  # HTTP/1.1 needs a Host, and a valid one (RFC 9112, 3.2).
        if "transfer-encoding" in self.headers:
            self.check_codings(self.headers["transfer-encoding"])
        expect = self.headers.get("expect", "")  # An HTTP/1.0 client's is ignored.
        self.continue_asked = version == "1.1" and asks_continue(expect)

    def check_codings(self, field: str) -> None:
        """Refuse a body sent with a coding this server cannot undo (RFC 9112, 6.1).

        Raises BadRequest: 400 when chunked does not come last (the body's
        end is unknown), 501 for any other coding before chunked.
        """
        codings = [coding.strip() for coding in field.lower().split(",")]
        if codings[-1] != "chunked":
            self.refuse(400)
        if len(codings) > 1:
            self.refuse(501)

    def on_body(self, body: bytes) -> None:
        self.unreported = 0  # Read and dropped.

    def on_message_complete(self) -> None:
        self.continue_asked = False  # The body came: the client is not waiting.
        # HTTP/1.0 keep-alive was a later addition that this server does not
        # take up: it keeps HTTP/1.1 connections only.
        keep_alive = self.parser.should_keep_alive() and self.parser.get_http_version() == "1.1"
        method = self.parser.get_method().decode("ascii")
        target, host = origin_form(self.target, self.headers.get("host", ""))
        self.requests.append(Asked(method, target, host, self.headers, keep_alive))


def asks_continue(expect: str) -> bool:
    """Tell whether an Expect field holds ``100-continue`` (in any case)."""
    return "100-continue" in (item.strip().lower() for item in expect.split(","))


def origin_form(target: str, host: str) -> tuple[str, str]:
    """Return the path and query of ``target``, and the host it names.

    A server must accept a target in absolute form (``http://host/path``)
    and then take the host from it, not from the Host header (RFC 9112,
    section 3.2.2).  Any other target is returned as it came, with ``host``.
    """
    if target.startswith("/"):
        return target, host  # The usual case, kept short.
    parts = urllib.parse.urlsplit(target)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return target, host  # "*" of OPTIONS, a CONNECT's "host:port"...
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.path or '/'}{query}", parts.netloc


def method_status(data: bytes) -> int:
    """Return 501 if ``data`` holds a request line with a method we lack, else 400.

    llhttp raises the same error for an unknown method (``BREW``) and for
    bytes that are not HTTP at all: the shape of the line tells them apart.
    """
    methods = (line[1].decode("ascii") for line in REQUEST_LINE.finditer(data))
    return 501 if any(method not in KNOWN_METHODS for method in methods) else 400


# --8<-- [end:receive]


# --8<-- [start:answer]
@types.coroutine
def answer(site: Site, asked: Asked) -> Generator[Any, None, Response]:
    """Return the site's answer to ``asked``, after the site's latency."""
    if asked.method not in KNOWN_METHODS:
        return text_response(501, "501: Not Implemented")  # PROPFIND, say: llhttp knows it.
    host = asked.host
    with site.counters.counting(asked.target):
        if site.latency > 0:
            yield from sleep(site.latency)
        try:
            request = Request(asked.method, asked.target, host, headers=asked.headers)
            return site.respond(request)
        except Exception:  # A bug in a page: the client gets a 500, the server goes on.
            LOGGER.exception("the site failed to answer %s %s", asked.method, asked.target)
            return text_response(500, "500: Internal Server Error")


def response_bytes(response: Response, method: str, keep_alive: bool) -> bytes:
    """Return the bytes of ``response``; HEAD gets the head alone."""
    lines = [f"HTTP/1.1 {response.status} {reason(response.status).decode()}"]
    lines += [f"{name}: {value}" for name, value in response.headers.items()]
    if response.status not in NO_BODY:  # A 304 must not say 0 (RFC 9110, 8.6).
        lines.append(f"Content-Length: {len(response.body)}")
    lines += [f"Date: {http_date(int(time.time()))}", f"Server: {SERVER_NAME}"]
    if not keep_alive:
        lines.append("Connection: close")  # Tells the client not to send more.
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head if method == "HEAD" or response.status in NO_BODY else head + response.body


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


def send_error(writer: StreamWriter, status: int) -> None:
    """Answer a request that could not be read with ``status``, then close."""
    LOGGER.info("answering %d to a bad request", status)
    response = text_response(status, f"{status}: {reason(status).decode()}")
    writer.write(response_bytes(response, "GET", keep_alive=False))
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
