"""A hostile test server: every way a server can break a crawler, one path each.

The crawler meets broken servers on the web.  ``HostileServer`` plays them
on purpose, on raw asyncio streams rather than an HTTP framework, so that it
can misbehave below HTTP: close at any moment, send a reset, stall, lie
about lengths, send garbage.  Each behaviour lives on its own path (see
``BEHAVIOURS``), so one server serves them all and counts the connections
each path received.

Most behaviours are scripts of steps (shared.sim's ``Step``: bytes, a
``Pause``, ``RESET``, ``SILENCE``), so the same script plays on a real
socket here (``play``) and on the simulated network, in virtual time
(``scripted``, which tests/sim_acceptance.py serves).  Only the
behaviours of kept-alive connections, which read the requests that
follow, are written for real sockets alone.  It also serves a few well-behaved pages (``/ok``,
``/ok/next`` and the targets of its redirects), so a test can check that a
crawl goes on with the other URLs.

Every connection is closed as soon as the client closes its side: an
endless behaviour never outlives the crawler's interest in it, which lets a
test count the process's open file descriptors right after a crawl.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import socket
import struct
import zlib
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from types import TracebackType

from shared.sim import RESET, SILENCE, Pause, Scripted, Step
from shared.testsite.server import LoopThread

# A behaviour: a function that returns a new script of steps for each connection.
Behaviour = Callable[[], Iterable[Step]]
# A behaviour that keeps the connection open and reads the requests that follow.
KeptBehaviour = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]

FILLER = b"<p>" + b"filler " * 1000 + b"</p>\n"  # About 7 KB of endless body.
UTF8_LOCATION = "/landing page/caf\xe9"  # Sent as UTF-8 bytes; requested percent-encoded.
LATIN1_LOCATION = b"/landing/caf\xe9"  # Not UTF-8: requested as /landing/caf%E9.


def response(status: str, headers: Sequence[str | bytes], body: bytes = b"") -> bytes:
    """Return the bytes of a response with the given status, headers and body."""
    lines = [f"HTTP/1.1 {status}".encode()]
    lines += [line if isinstance(line, bytes) else line.encode() for line in headers]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def page(body: bytes, *headers: str | bytes) -> bytes:
    """Return a complete 200 HTML response with ``body``, closing the connection."""
    headers = headers or ("Content-Type: text/html; charset=utf-8",)
    framing = [f"Content-Length: {len(body)}", "Connection: close"]
    return response("200 OK", [*headers, *framing], body)


def send(data: bytes) -> Behaviour:
    """Return a behaviour that sends ``data`` and then closes the connection."""
    return lambda: [data]


# --- Behaviours that need more than fixed bytes ------------------------------


def endless_headers() -> Iterator[Step]:
    """Send a status line, then header lines that never end."""
    yield b"HTTP/1.1 200 OK\r\n"
    number = 0
    while True:
        number += 1
        yield b"X-Filler-%d: %s\r\n" % (number, b"x" * 40)


def endless_body() -> Iterator[Step]:
    """Send a 200 HTML head without a length, then a body that never ends."""
    yield b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n"
    while True:
        yield FILLER


def trickle(data: bytes) -> Behaviour:
    """Return a behaviour that sends ``data`` one byte per second."""

    def script() -> Iterator[Step]:
        for byte in data:
            yield bytes([byte])
            yield Pause(1.0)

    return script


def reset() -> list[Step]:
    """Reset the connection at once: a TCP reset, not a FIN."""
    return [RESET]


def never_answer() -> list[Step]:
    """Accept the request and never send a byte."""
    return [SILENCE]


def close_at_once() -> list[Step]:
    """Close the connection before sending anything."""
    return []


# --- Compressed bodies ----------------------------------------------------------

LINK = b'<a href="/ok/next">next</a>'  # The body of the well-behaved pages, 27 bytes.


def encoded_page(coding: str, payload: bytes) -> bytes:
    """Return a 200 HTML response whose body is ``payload`` in the content ``coding``."""
    return page(payload, "Content-Type: text/html; charset=utf-8", f"Content-Encoding: {coding}")


def raw_deflate(data: bytes) -> bytes:
    """Return ``data`` as raw deflate, without the zlib wrapper some servers leave out."""
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


BOMB_MEMBER = gzip.compress(b"\0" * 10_000_000)  # About 10 KB: one gzip member of 10 MB.


def gzip_bomb() -> Iterator[Step]:
    """Send a gzip body of about 2 MB that expands to 2 GB of zeros."""
    head = "Content-Type: text/html", "Content-Encoding: gzip", "Connection: close"
    yield response("200 OK", [*head, f"Content-Length: {200 * len(BOMB_MEMBER)}"])
    for _ in range(200):  # Members in a row are one body: 200 times 10 MB.
        yield BOMB_MEMBER


def gzip_then_junk() -> Iterator[Step]:
    """Send a small gzip body, announced as 64 MiB, then junk that never ends."""
    member = gzip.compress(LINK)
    head = "Content-Type: text/html", "Content-Encoding: gzip", "Connection: close"
    yield response("200 OK", [*head, f"Content-Length: {len(member) + 64 * 2**20}"]) + member
    while True:
        yield FILLER


# --- Connections kept alive -------------------------------------------------------


def kept_page(body: bytes) -> bytes:
    """Return a complete 200 HTML response that leaves the connection open."""
    headers = ["Content-Type: text/html; charset=utf-8", f"Content-Length: {len(body)}"]
    return response("200 OK", headers, body)


KEPT_PAGES = {"/kept/next": kept_page(b"<p>the end</p>")}
UNASKED = kept_page(b'<a href="/kept/unasked">never asked for</a>')


async def answer_kept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answer each further request on the connection, keeping it open, until the client closes."""
    while True:
        head = await reader.readuntil(b"\r\n\r\n")
        target = head.split(b"\r\n", 1)[0].split(b" ")[1].decode("latin-1")
        writer.write(KEPT_PAGES.get(target, response("404 Not Found", ["Content-Length: 0"])))
        await writer.drain()


async def unsolicited_response(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answer, with a second response nobody asked for right behind it; keep serving.

    One write, so one send: with two, a crawler in this process may read
    the first, parse it and send its next request on this connection
    before this thread sends the second, which then arrives after that
    request, as its answer would, and no client can tell it from one.
    stage3_asyncio/tests/test_connections.py sends the unasked response
    into an idle kept connection, one step at a time.
    """
    writer.write(kept_page(b'<a href="/kept/next">next</a>') + UNASKED)
    await writer.drain()
    await answer_kept(reader, writer)


async def close_when_idle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answer as if the connection stayed open, then close it while the client holds it idle."""
    writer.write(kept_page(b'<a href="/kept/next">next</a>'))
    await writer.drain()


KEPT_ALIVE: dict[str, KeptBehaviour] = {
    "/kept/unsolicited-response": unsolicited_response,
    "/kept/close-when-idle": close_when_idle,
}

# A complete response, then at once (in the same write) bytes that answer
# nothing: the page is the response, and the connection is not used again.
# Scripts, but with no Connection: close: they are about kept-alive connections.
BYTES_AFTER: dict[str, Behaviour] = {
    "/kept/then-junk": send(kept_page(LINK) + b"junk"),  # No line break at all.
    # Bare LFs, and a link that must never be followed: it is no page's.
    "/kept/then-html": send(kept_page(LINK) + b'<p>more html</p>\n<a href="/kept/unasked">x</a>\n'),
    "/kept/then-bogus-head": send(kept_page(LINK) + b"JUNK\r\n\r\n"),  # Ends like a head.
}


# --- The paths ---------------------------------------------------------------

BEHAVIOURS: dict[str, Behaviour] = {
    "/close-before-head": close_at_once,
    "/close-mid-body": send(  # Closes in the middle of a chunk.
        response("200 OK", ["Content-Type: text/html", "Transfer-Encoding: chunked"])
        + b"400\r\n<p>the first part of a chunk of 1024 bytes"
    ),
    "/short-body": send(
        response("200 OK", ["Content-Type: text/html", "Content-Length: 1000"], b"<p>short")
    ),
    # Bytes of a TLS record and an SSH banner where the status line should be.
    "/garbage": send(b"\x00\xff\x16\x03\x01 SSH-2.0-not-http\r\n\r\n<p>garbage"),
    "/endless-headers": endless_headers,
    # 16 KB: over the 8 KB a header may have, under the 64 KB of a whole head.
    "/long-header-line": send(page(b"<p>ok</p>", "X-Long: " + "x" * 16_000)),
    "/endless-body": endless_body,
    "/slowloris": trickle(page(LINK)),  # A valid response, one byte per second.
    "/no-blank-line": send(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 9\r\n"),
    "/non-ascii-headers": send(
        b"HTTP/1.1 200 \xc3\x9cberall OK \xff\r\n"  # Non-ASCII in the reason phrase too.
        b"Content-Type: text/html; charset=utf-8\r\n"
        b"X-Utf-8: caf\xc3\xa9 \xe2\x98\x83\r\n"
        b"X-Latin-1: caf\xe9 \xff\xfe\r\n"
        b"Server: \xf0\x9f\x95\xb7 hostile/1.0\r\n"
        b"Content-Length: 27\r\nConnection: close\r\n\r\n"
        b'<a href="/ok/next">next</a>'
    ),
    "/invalid-location": send(  # An unbalanced '[': no URL parser accepts it.
        response("302 Found", ["Location: http://[oops/", "Content-Length: 0"])
    ),
    "/redirect-ftp": send(
        response("302 Found", ["Location: ftp://127.0.0.1/file.txt", "Content-Length: 0"])
    ),
    "/location-utf8": send(
        response("302 Found", [f"Location: {UTF8_LOCATION}".encode(), "Content-Length: 0"])
    ),
    "/location-latin1": send(
        response("302 Found", [b"Location: " + LATIN1_LOCATION, "Content-Length: 0"])
    ),
    "/reset": reset,
    "/never-answer": never_answer,
    "/no-content-type": send(
        response("200 OK", ["Content-Length: 27"], b'<a href="/ok/next">next</a>')
    ),
    "/duplicate-headers": send(
        page(
            b'<a href="/ok/next">next</a>',
            "Content-Type: text/html; charset=utf-8",
            "Content-Type: text/plain; charset=latin-1",
            "Server: first",
            "Server: second",
        )
    ),
    # Two lengths, or a length and chunks: which one frames the body?
    "/conflicting-length": send(
        response("200 OK", ["Content-Length: 4", "Content-Length: 9"], b"<p>body</p>")
    ),
    "/bad-chunk-size": send(  # A chunk whose size line is not hex, in the head's write.
        response("200 OK", ["Content-Type: text/html", "Transfer-Encoding: chunked"])
        + b"4\r\n<p>x\r\nZZ\r\n<p>y\r\n0\r\n\r\n"
    ),
    "/length-and-chunked": send(
        response(
            "200 OK",
            ["Content-Length: 100", "Transfer-Encoding: chunked"],
            b"4\r\n<p>x\r\n0\r\n\r\n",
        )
    ),
}

BEHAVIOURS.update(BYTES_AFTER)
BEHAVIOURS.update(
    {
        # Compressed bodies: decoded by every stage, max_size counting decoded bytes.
        "/gzip": send(encoded_page("gzip", gzip.compress(LINK))),
        "/deflate": send(encoded_page("deflate", zlib.compress(LINK))),
        "/deflate-raw": send(encoded_page("deflate", raw_deflate(LINK))),
        "/gzip-bomb": gzip_bomb,
        "/gzip-broken": send(encoded_page("gzip", b"\x1f\x8b not gzip after all")),
        "/gzip-then-junk": gzip_then_junk,
        # Wire formats every stage reads alike.
        "/folded-header": send(
            response(
                "200 OK",
                [
                    "Content-Type: text/html;",
                    "  charset=utf-8",
                    "Content-Length: 27",
                    "Connection: close",
                ],
                LINK,
            )
        ),
        "/interim-responses": send(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n"
            + page(LINK)
        ),
        # A thousand interim answers before the real one: more than any server sends.
        "/endless-interim": send(b"HTTP/1.1 100 Continue\r\n\r\n" * 1000 + page(LINK)),
        # Numbers of thousands of digits, more than Python's int() reads.
        "/huge-content-length": send(
            response("200 OK", ["Content-Type: text/html", "Content-Length: " + "9" * 5000], LINK)
        ),
        "/huge-chunk-size": send(
            response("200 OK", ["Content-Type: text/html", "Transfer-Encoding: chunked"])
            + b"f" * 5000
            + b"\r\n"
            + LINK
        ),
        # ESC and BEL in a header: terminal commands that clear the screen and ring.
        "/control-characters": send(page(LINK, b"Content-Type: text/html\x1b[2J\x07")),
        "/unasked-101": send(
            response("101 Switching Protocols", ["Upgrade: websocket", "Connection: Upgrade"])
            + page(LINK)
        ),
        "/status-600": send(
            response("600 Beyond", ["Content-Type: text/html", "Content-Length: 27"], LINK)
        ),
        "/status-099": send(
            response("099 Below", ["Content-Type: text/html", "Content-Length: 27"], LINK)
        ),
    }
)

# Well-behaved pages: what a crawl goes on with, and where the redirects land.
PAGES: dict[str, Behaviour] = {
    "/ok": send(page(b'<a href="/ok/next">next</a>')),
    "/ok/next": send(page(b"<p>the end</p>")),
    "/landing%20page/caf%C3%A9": send(page(b"<p>landed</p>")),
    "/landing/caf%E9": send(page(b"<p>landed</p>")),
    "/kept/next": send(page(b"<p>the end</p>")),  # When asked on a new connection.
}
NOT_FOUND = send(response("404 Not Found", ["Content-Length: 0", "Connection: close"]))


# --- robots.txt gone wrong: HostileServer(robots=NAME) serves one of these ---


def moved(location: str) -> Behaviour:
    """Return a behaviour that redirects to ``location``."""
    headers = [f"Location: {location}", "Content-Length: 0", "Connection: close"]
    return send(response("301 Moved Permanently", headers))


ROBOTS_RULES = b"User-agent: *\nDisallow: /ok/next\n"  # What each variant comes down to.
TEXT = "Content-Type: text/plain"
# About 700 KB: its last rule lies past the 500 KiB a crawler reads, so it is not obeyed.
HUGE_ROBOTS = ROBOTS_RULES + b"# filler: many lines of nothing\n" * 22_000 + b"Disallow: /ok\n"
MALFORMED_ROBOTS = (
    b"\x00\xff\xfe\x89PNG binary bytes\r\n"
    b"Disallow: /ok\n"  # No User-agent line before it: a rule for nobody.
    b"<html><body>Not a robots.txt</body></html>\n"
    b"User-agent: *\n"
    b"Crawl-delay: soon\n"  # Not a number: ignored (else the crawl would wait).
    b"Disallow: /ok/next\n" + b"Allow: /" + b"x" * 100_000 + b"\n"  # A 100 KB line.
)
ROBOTS: dict[str, Behaviour] = {
    "huge": send(page(HUGE_ROBOTS, TEXT)),
    "slow": trickle(page(ROBOTS_RULES, TEXT)),  # Never done within the timeout.
    "redirecting": moved("/robots/moved.txt"),  # Then to /robots/final.txt.
    "malformed": send(page(MALFORMED_ROBOTS, TEXT)),
}
ROBOTS_PAGES: dict[str, Behaviour] = {
    "/robots/moved.txt": moved("/robots/final.txt"),
    "/robots/final.txt": send(page(ROBOTS_RULES, TEXT)),
}


# --- The servers -------------------------------------------------------------


def routes(robots: str | None = None) -> dict[str, Behaviour]:
    """Return the behaviour of each path; ``robots`` names the ``ROBOTS`` variant (None: 404)."""
    found = {**BEHAVIOURS, **PAGES, **ROBOTS_PAGES}
    if robots is not None:
        found["/robots.txt"] = ROBOTS[robots]
    return found


def scripted(robots: str | None = None) -> Scripted:
    """Return the behaviours as a server of the simulated network (``World.serve``)."""
    return Scripted(routes(robots), NOT_FOUND)


async def play(script: Iterable[Step], writer: asyncio.StreamWriter) -> None:
    """Play ``script`` on a real connection; the caller closes it after."""
    for step in script:
        if isinstance(step, bytes):
            writer.write(step)
            await writer.drain()
        elif isinstance(step, Pause):
            await asyncio.sleep(step.seconds)
        elif step == RESET:  # SO_LINGER set to 0: closing sends a reset, not a FIN.
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return
        elif step == SILENCE:
            await asyncio.Event().wait()


class HostileServer(LoopThread):
    """A context manager serving ``BEHAVIOURS``, ``KEPT_ALIVE`` and ``PAGES`` from a thread.

    ``connections`` counts the connections per request target (the path as
    the client sent it, percent-encoding included).  ``refused_url`` is the
    address of a port that refuses connections, for the one failure a path
    cannot play.  ``robots`` names the ``ROBOTS`` variant to serve as
    /robots.txt (None: a 404).  Raises OSError from ``__enter__`` when it
    cannot bind.
    """

    def __init__(self, robots: str | None = None) -> None:
        self.routes = routes(robots)
        self.connections: Counter[str] = Counter()
        self.port = 0
        super().__init__()
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._refusing = socket.socket()  # Bound but not listening: refuses.
        self._refusing.bind(("127.0.0.1", 0))
        self.refused_url = f"http://127.0.0.1:{self._refusing.getsockname()[1]}/"

    def url(self, path: str) -> str:
        """Return the absolute URL of ``path`` on this server."""
        return f"http://127.0.0.1:{self.port}{path}"

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            super().__exit__(exc_type, exc, tb)
        finally:
            self._refusing.close()

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=128)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for handler in list(self._handlers):
            handler.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Read one request head, then play the behaviour of its path."""
        handler = asyncio.current_task()
        assert handler is not None
        self._handlers.add(handler)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            target = head.split(b"\r\n", 1)[0].split(b" ")[1].decode("latin-1")
            self.connections[target] += 1
            if target in KEPT_ALIVE:  # It reads the requests that follow itself.
                await KEPT_ALIVE[target](reader, writer)
            else:
                script = self.routes.get(target, NOT_FOUND)()
                await _until_peer_closes(play(script, writer), reader)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, IndexError):
            pass  # The client went away or sent no request: nothing to play.
        finally:
            self._handlers.discard(handler)
            writer.close()
            with contextlib.suppress(OSError, asyncio.CancelledError):
                await writer.wait_closed()


async def _until_peer_closes(behaviour: Awaitable[None], reader: asyncio.StreamReader) -> None:
    """Run ``behaviour`` until it ends or the client closes its side, whichever is first."""
    play = asyncio.ensure_future(behaviour)
    watch = asyncio.ensure_future(_peer_closed(reader))
    try:
        await asyncio.wait({play, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (play, watch):
            task.cancel()
        await asyncio.gather(play, watch, return_exceptions=True)


async def _peer_closed(reader: asyncio.StreamReader) -> None:
    """Return once the client has closed (or reset) the connection."""
    with contextlib.suppress(OSError):
        while await reader.read(4096):
            pass
