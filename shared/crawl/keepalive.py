"""Stage 3's kept-alive connections, made to behave like the fresh ones of stages 1 and 2.

Stages 1 and 2 open a connection for each request, so whatever a server
does after its answer cannot reach the next request.  aiohttp keeps
connections open and hands them to later requests, which brings three cases
the chapter's crawler never met:

- The server closed a kept connection while it waited in the pool.  The
  request sent on it meets the end of the connection at once.  That says
  nothing about the page: ``Crawler.send`` sends the request again on
  another connection without counting a try, when ``CarefulConnector``
  has marked its ``Attempt`` as made on a kept connection.
- The server sent bytes on a kept connection that nobody asked for (an
  unsolicited response).  aiohttp would read them as the answer to the
  next request sent on that connection.  ``CarefulConnector`` closes such
  a connection instead of lending it out.
- The server sent more bytes right after a complete response, in the same
  read: junk, a stray line of HTML, a second response.  aiohttp's parser
  reads on past the end of the response, fails on those bytes, and fails
  the whole request with it ("Bad status line"), although the page arrived
  whole.  Stages 1 and 2 stop reading where the response ends, and so does
  ``FirstResponseParser``: the page is the first complete response, and the
  connection is closed when the request is done.

An idle connection has nothing to read, so before lending one out the
connector asks the socket, without waiting, whether it is readable: if it
is, the server has either closed it or sent something unasked, and the
connection is dropped (urllib3 checks its pooled connections the same way).

Where does a response end?  ``FirstResponseParser`` does not parse HTTP
itself: it stands between aiohttp and aiohttp's own (fast, C) parser, and
only chooses where to cut the bytes it feeds it.  The parser hands out a
response as soon as its head ends, at a blank line, so a head is fed in
pieces that end wherever a blank line does: when a response comes out, its
head ended with the piece just fed, and the bytes after it are its body.
When the head gives the body's length (``Content-Length``, not chunked),
at most that many bytes are fed, in one piece, and any bytes past them
came after the response.  Otherwise the body is fed in one piece but its
last byte: if the body is complete before that byte, bytes came after the
response.  Once the body is complete nothing more is fed, and if the
parser fails on what came after it, that is no failure of the page.  A
malformed body still fails it.

This module is about aiohttp's pool, not about asyncio: it lives here, in
``shared/crawl``, and not in ``stage3_asyncio``, so that the stage reads as
the lesson ("the real thing is short") and its chapter need not walk
through aiohttp's internals.  Only stage 3 uses it.  It leans on a few of
aiohttp's private names, and ``stage3_asyncio/tests/test_connections.py``
fails if they change: ``TCPConnector._get``, the one place where aiohttp
takes a connection out of its pool; ``TCPConnector._factory``, which makes
each connection's protocol; and ``ResponseHandler._parser``, the parser
that ``set_response_params`` makes for each request, whose ``feed_data``
returns ``(messages, upgraded, tail)``.  One more, ``TCPConnector._resolve_host``
(where aiohttp looks a host up, IP addresses included), lets the connector
keep only the addresses the crawl's ``UrlPolicy`` allows; the acceptance
tests of private addresses fail if aiohttp stops calling it.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
import re
import select
from typing import Any

import aiohttp
from aiohttp.client_proto import ResponseHandler
from aiohttp.http import RawResponseMessage

from shared.record.trace import NO_TRACE, Trace
from shared.web.http import MAX_INTERIM_RESPONSES, BadResponse
from shared.web.urls import UrlPolicy

Message = tuple[RawResponseMessage, aiohttp.StreamReader]  # A head, and its body to come.


class CarefulConnector(aiohttp.TCPConnector):
    """A TCPConnector that reads one response per request and lends out only clean connections."""

    def __init__(self, policy: UrlPolicy | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.policy = policy  # Which addresses a crawl may connect to.
        # aiohttp makes the protocol of each new connection by calling _factory().
        make: type[ResponseHandler] = OneResponseHandler
        self._factory = functools.partial(make, loop=asyncio.get_running_loop())

    async def _get(self, key: Any, *args: Any) -> Any:  # Arguments differ across aiohttp versions.
        while (connection := await super()._get(key, *args)) is not None:
            protocol = connection.protocol
            # should_close: the server asked to close, or sent data no request is waiting for.
            if protocol is not None and not protocol.should_close and not _readable(protocol):
                attempt = _CURRENT_ATTEMPT.get()
                if attempt is not None:
                    attempt.reused = True  # The request goes out on a kept connection.
                return connection
            connection.close()  # Closed, or holding bytes that answer nothing: dropped.
        return None

    async def _resolve_host(self, host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        """Look ``host`` up as aiohttp does; keep only the addresses the policy allows.

        Raises PrivateAddress when it allows none (see ``UrlPolicy.allowed_addresses``).
        """
        hosts = await super()._resolve_host(host, port, *args, **kwargs)
        if self.policy is None:
            return hosts
        allowed = self.policy.allowed_addresses(host, [found["host"] for found in hosts])
        return [found for found in hosts if found["host"] in allowed]


def _readable(protocol: ResponseHandler) -> bool:
    """Tell whether the connection's socket has bytes (or its end) waiting, without waiting.

    ``poll``, not ``select``: select() takes no descriptor past 1023
    (FD_SETSIZE), and a crawl with many connections open has such sockets.
    """
    transport = protocol.transport
    sock = None if transport is None else transport.get_extra_info("socket")
    if sock is None:
        return False
    simulated = getattr(sock, "_sock", sock)  # asyncio lends out a TransportSocket around it.
    if hasattr(simulated, "readable"):  # A simulated socket (shared/sim): no descriptor to poll.
        return bool(simulated.readable())
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLIN)
    return bool(poller.poll(0))


class OneResponseHandler(ResponseHandler):
    """aiohttp's connection protocol, reading each request's response with a FirstResponseParser."""

    def set_response_params(self, **params: Any) -> None:
        """Make the parser for the next response, as aiohttp does, and wrap it."""
        super().set_response_params(**params)
        # A stand-in with the parser's methods, not a subclass: hence the ignore.
        self._parser = FirstResponseParser(self._parser, self)  # type: ignore[assignment]


class FirstResponseParser:
    """Feed aiohttp's parser the first final response of a request, and nothing after it.

    ``parser`` is the parser aiohttp made (C or Python); whatever else aiohttp
    asks of it (``pause_reading``, say) goes to it unchanged.  Bytes after
    the response make ``protocol`` close the connection once the request is done.
    """

    def __init__(self, parser: Any, protocol: ResponseHandler) -> None:
        self.parser = parser
        self.protocol = protocol
        self.body: aiohttp.StreamReader | None = None  # The final response's, once its head is in.
        self.left: int | None = None  # Bytes of that body still to come, when its head says.
        self.interim = 0  # Interim (1xx) responses read before the final one.

    def __getattr__(self, name: str) -> Any:
        return getattr(self.parser, name)

    def feed_data(self, data: bytes) -> tuple[list[Message], bool, bytes]:
        """Parse ``data`` as aiohttp's parser does, cut after the end of the final response."""
        messages: list[Message] = []
        start = 0
        while self.body is None and start < len(data):  # Up to where a head may end.
            end = head_piece_end(data, start)
            found, upgraded, tail = self.parser.feed_data(data[start:end])
            start = end
            for message, payload in found:
                messages.append((message, payload))
                # Final, as aiohttp's ClientResponse.start tells: not an interim 1xx.
                if not 100 <= message.code <= 199 or message.code == 101:
                    self.body, self.left = payload, body_length(message)
                else:
                    self.count_interim()
            if upgraded:  # After a 101 aiohttp stops parsing and keeps the rest as it is.
                return messages, True, tail + data[start:]
        if self.body is not None and (start < len(data) or not data):
            self.feed_body(data[start:])
        return messages, False, b""

    def count_interim(self) -> None:
        """Count one interim response; raises BadResponse past the limit stages 1 and 2 keep."""
        self.interim += 1
        if self.interim > MAX_INTERIM_RESPONSES:
            raise BadResponse(f"more than {MAX_INTERIM_RESPONSES} interim responses")

    def feed_body(self, data: bytes) -> None:
        """Feed bytes of the final response's body; close the connection if more follow it.

        Raises what aiohttp's parser raises for a malformed body, and gives
        the body that error too: aiohttp's C parser would leave it waiting.
        """
        assert self.body is not None
        body = self.body
        try:
            more = self.more_after_body(data)
        except Exception as error:
            if not body.is_eof():
                body.set_exception(aiohttp.ClientPayloadError(f"malformed body: {error!r}"))
                raise
            more = True  # The parser failed on what followed the response, not on the page.
        if more:
            self.protocol.force_close()

    def more_after_body(self, data: bytes) -> bool:
        """Feed body bytes, and tell whether any came after the end of the body."""
        assert self.body is not None
        if self.body.is_eof():
            return bool(data)  # The response is complete: nothing more is parsed.
        if self.left is not None and data:  # The length is known: feed no more than it.
            piece = data[: self.left]
            self.left -= len(piece)
            self.parser.feed_data(piece)
            return len(piece) < len(data)
        # All but the last byte first (b"" only resumes a paused parser).
        if self.parser.feed_data(data[:-1])[0]:
            return True  # Another response after the body.
        if self.body.is_eof():
            return bool(data)  # The body ended before the last byte.
        return bool(data) and bool(self.parser.feed_data(data[-1:])[0])

    def feed_eof(self) -> Any:
        """Tell the parser the connection ended, unless the response was already complete."""
        if self.body is not None and self.body.is_eof():
            return None  # Else bytes after the response could fail a body that is whole.
        return self.parser.feed_eof()


def body_length(message: RawResponseMessage) -> int | None:
    """Return the length of the body that ``message``'s head announces, None if it does not."""
    length = message.headers.get("Content-Length")
    if message.chunked or length is None or not length.isdigit():
        return None  # Chunked, until the end of the connection, or no number.
    return int(length)


BLANK_LINE = re.compile(rb"\n\r?\n")  # A line break, then an empty line (LF or CRLF).


def head_piece_end(data: bytes, start: int) -> int:
    """Return where the piece of ``data`` to feed from ``start`` ends: where a head may end.

    A head ends with a blank line, a line break right after another one.
    Every piece ends after a line break, so the search starts on the last
    byte of the piece before.  A read that opens with a line break ends its
    first piece there: the line break before it may have come in the last read.
    """
    if start == 0 and data.startswith((b"\n", b"\r\n")):
        return data.find(b"\n") + 1
    blank = BLANK_LINE.search(data, max(start - 1, 0))
    return len(data) if blank is None else blank.end()


@dataclasses.dataclass(slots=True)
class Attempt:
    """One request as it is sent: its URL, and did the connector lend it a kept connection?"""

    url: str  # As the crawler stores it: the trace knows the fetch by it.
    reused: bool = False


# The Attempt of the request that the current task is sending.  Every task
# runs in a context of its own, so workers sending at once never share one.
# (aiohttp's tracing could tell the same, but a session with any trace
# config builds trace objects and awaits its signals on every request:
# see phase_requests.)
_CURRENT_ATTEMPT: contextvars.ContextVar[Attempt | None] = contextvars.ContextVar(
    "attempt", default=None
)


def new_attempt(url: str) -> Attempt:
    """Return the Attempt of the GET of ``url`` this task is about to send, for the connector."""
    attempt = Attempt(url)
    _CURRENT_ATTEMPT.set(attempt)
    return attempt


def phase_requests(recorder: Trace) -> type[aiohttp.ClientRequest]:
    """Return the request class of a session that tells ``recorder`` when a request sends and waits.

    Without a trace, aiohttp's own class.  aiohttp's TraceConfig signals
    could tell the same, but they build a trace object and await a signal
    for every step of every request: 63 000 instructions per URL more than
    this class (counted with callgrind on a traced crawl of 4 090 URLs).
    """
    if recorder is NO_TRACE:
        return aiohttp.ClientRequest

    class PhaseRequest(aiohttp.ClientRequest):
        """aiohttp's request, noting its ``send`` and ``wait`` phases in the trace."""

        async def send(self, conn: aiohttp.connector.Connection) -> aiohttp.ClientResponse:
            """Note ``send`` (a connection is ready), write the request, then note ``wait``."""
            attempt = _CURRENT_ATTEMPT.get()  # The crawler's URL, not yarl's copy.
            url = str(self.original_url) if attempt is None else attempt.url
            recorder.phase(url, "send")  # A new connection, or a kept one.
            response = await super().send(conn)
            recorder.phase(url, "wait")  # The request is written; the answer is awaited.
            return response

    return PhaseRequest


# The errors of a connection the server had closed: the end, or a reset on writing.
STALE_ERRORS = (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)
