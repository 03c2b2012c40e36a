"""Stage 3's kept-alive connections: nothing a server sends unasked is read as an answer.

Neither bytes sent while a connection waits in the pool, nor bytes sent
right after a complete response.
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import aiohttp
import pytest

from shared.crawl.keepalive import (
    CarefulConnector,
    FirstResponseParser,
    OneResponseHandler,
    new_attempt,
)
from stage3_asyncio.crawler import Crawler


def kept_answer(body: bytes) -> bytes:
    """Return a complete response that leaves the connection open."""
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


Serve = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@contextlib.asynccontextmanager
async def serving(serve: Serve) -> AsyncIterator[str]:
    """Run a server calling ``serve`` for each connection; yield its URL."""
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
    finally:
        server.close()
        await server.wait_closed()


async def second_answer(connector_class: type[aiohttp.TCPConnector]) -> bytes:
    """GET twice from a server that sends an unasked response between the two requests."""
    first_read, unasked_sent = asyncio.Event(), asyncio.Event()
    connections = 0

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await reader.readuntil(b"\r\n\r\n")
        writer.write(kept_answer(b"answer"))
        if connections == 1:  # While the client holds this connection idle:
            await first_read.wait()
            writer.write(kept_answer(b"unasked"))
            await writer.drain()  # In the client's socket now.
            unasked_sent.set()
        await reader.read()  # Until the client closes.
        writer.close()

    async with serving(serve) as url, aiohttp.ClientSession(connector=connector_class()) as session:
        async with session.get(url) as response:
            await response.read()
        first_read.set()
        await unasked_sent.wait()
        async with session.get(url) as response:
            return await response.read()


def test_a_kept_connection_with_unasked_bytes_is_not_reused() -> None:
    assert asyncio.run(second_answer(CarefulConnector)) == b"answer"


def test_without_the_check_aiohttp_reads_the_unasked_response() -> None:
    # Why CarefulConnector exists; if aiohttp ever checks this itself, this test says so.
    assert asyncio.run(second_answer(aiohttp.TCPConnector)) == b"unasked"


async def reuse_marks() -> list[bool]:
    """GET three times from a server that keeps its connections; return each Attempt's mark."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError):  # The client closed.
            while await reader.readuntil(b"\r\n\r\n"):
                writer.write(kept_answer(b"answer"))
        writer.close()

    marks = []
    session = aiohttp.ClientSession(connector=CarefulConnector(), timeout=TIMEOUT)
    async with serving(serve) as url, session:
        for _ in range(3):
            attempt = new_attempt(url)
            async with session.get(url) as response:
                await response.read()
            marks.append(attempt.reused)
    return marks


def test_the_connector_marks_a_request_sent_on_a_kept_connection() -> None:
    assert asyncio.run(reuse_marks()) == [False, True, True]


# --- Many connections open at once ----------------------------------------------

MANY = 1100  # Connections held open: their two ends take descriptors past 1023.


@contextlib.contextmanager
def many_connections(count: int) -> Iterator[None]:
    """Hold ``count`` TCP connections open (both ends), raising the descriptor limit if needed."""
    needed = 2 * count + 200  # Both ends, and what the test itself opens.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            pytest.skip(f"{needed} file descriptors are needed and the hard limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    sockets: list[socket.socket] = []
    try:
        with socket.create_server(("127.0.0.1", 0), backlog=count) as listener:
            for _ in range(count):
                sockets.append(socket.create_connection(listener.getsockname()))
                sockets.append(listener.accept()[0])
        yield
    finally:
        for sock in sockets:
            sock.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_kept_connection_past_descriptor_1023_is_checked_too() -> None:
    # select.select() raised ValueError for such a socket ("filedescriptor
    # out of range"), and every request on a kept connection failed.
    with many_connections(MANY):
        assert asyncio.run(reuse_marks()) == [False, True, True]


# --- Bytes right after a complete response ------------------------------------------

TIMEOUT = aiohttp.ClientTimeout(total=5)  # What a wrongly reused connection waits.
AFTER_THE_ANSWER = {
    "junk": b"junk",  # No line break at all.
    "html": b"<p>more html</p>\n<p>and more</p>\n",  # Bare LFs.
    "bogus-head": b"JUNK\r\n\r\n",  # Ends like a head, starts like none.
    "part-of-a-head": b"HTTP/1.1 2",  # Valid so far: the parser fails on nothing.
    "a-second-response": kept_answer(b"second"),
}
INTERIM = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n"


async def two_gets(first: bytes) -> tuple[bytes, bytes, int]:
    """GET twice; the first connection answers with ``first``, and never again.

    Returns the two bodies and how many connections the server received.
    """
    connections = 0

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await reader.readuntil(b"\r\n\r\n")
        writer.write(first if connections == 1 else kept_answer(b"fresh"))
        await reader.read()  # Until the client closes; a second request gets no answer.
        writer.close()

    bodies = []
    async with serving(serve) as url:
        connector = CarefulConnector()
        async with aiohttp.ClientSession(connector=connector, timeout=TIMEOUT) as session:
            for _ in range(2):
                async with session.get(url) as response:
                    bodies.append(await response.read())
    return bodies[0], bodies[1], connections


@pytest.mark.parametrize("extra", AFTER_THE_ANSWER.values(), ids=AFTER_THE_ANSWER.keys())
def test_bytes_after_a_complete_response_are_not_read(extra: bytes) -> None:
    # The page, then the second request on a new connection.
    assert asyncio.run(two_gets(kept_answer(b"answer") + extra)) == (b"answer", b"fresh", 2)


@pytest.mark.parametrize("extra", AFTER_THE_ANSWER.values(), ids=AFTER_THE_ANSWER.keys())
def test_bytes_after_a_chunked_response_are_not_read(extra: bytes) -> None:
    # No Content-Length: the body is fed but its last byte, then that byte.
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nanswer\r\n0\r\n\r\n"
    assert asyncio.run(two_gets(chunked + extra)) == (b"answer", b"fresh", 2)


@pytest.mark.parametrize(("extra", "kept"), [(b"", True), (b"junk", False)], ids=["end", "junk"])
def test_the_announced_length_is_fed_in_one_piece(extra: bytes, kept: bool) -> None:
    """With a Content-Length the body is fed whole, and the bytes after it are cut."""
    loop = asyncio.new_event_loop()
    try:
        protocol = OneResponseHandler(loop=loop)
        protocol.set_response_params()
        parser = protocol._parser
        assert isinstance(parser, FirstResponseParser)
        [(message, body)], _, _ = parser.feed_data(kept_answer(b"answer") + extra)
        assert (message.code, body.is_eof(), list(body._buffer)) == (200, True, [b"answer"])
        assert protocol.should_close is not kept  # Bytes after it: the connection is dropped.
    finally:
        loop.close()


def test_interim_responses_still_come_before_the_final_one() -> None:
    first = INTERIM + kept_answer(b"answer") + b"junk"
    assert asyncio.run(two_gets(first)) == (b"answer", b"fresh", 2)


def test_without_it_aiohttp_fails_the_whole_request() -> None:
    # Why FirstResponseParser exists; if aiohttp ever stops at the end of a response, this says so.
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(kept_answer(b"answer") + AFTER_THE_ANSWER["bogus-head"])
        await reader.read()
        writer.close()

    async def get() -> bytes:
        async with (
            serving(serve) as url,
            aiohttp.ClientSession(timeout=TIMEOUT) as session,
            session.get(url) as response,
        ):
            return await response.read()

    with pytest.raises(aiohttp.ClientResponseError, match="Bad status line"):
        asyncio.run(get())


def test_a_malformed_body_after_the_head_fails_at_once() -> None:
    # The head is handed on before the body is parsed, so the body must get the error
    # (aiohttp's C parser leaves it waiting for the timeout).
    head_read = asyncio.Event()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        await head_read.wait()  # The body comes in a read of its own.
        writer.write(b"5\r\nhello\r\nZZ\r\n")  # 'ZZ' is no chunk size.
        await reader.read()
        writer.close()

    async def get() -> bytes:
        async with (
            serving(serve) as url,
            aiohttp.ClientSession(connector=CarefulConnector(), timeout=TIMEOUT) as session,
            session.get(url) as response,
        ):
            head_read.set()
            return await response.read()

    with pytest.raises(aiohttp.ClientPayloadError):
        asyncio.run(get())


def test_the_aiohttp_internals_it_relies_on_are_still_there() -> None:
    async def read_first_response(data: bytes) -> OneResponseHandler:
        connector = CarefulConnector()
        protocol = connector._factory()  # Else TCPConnector._factory is gone.
        await connector.close()
        assert isinstance(protocol, OneResponseHandler), "TCPConnector._factory is not used"
        protocol.set_response_params()
        assert isinstance(protocol._parser, FirstResponseParser), "no ResponseHandler._parser"
        protocol.data_received(data)  # aiohttp's protocol feeds its _parser.
        message, _ = await protocol.read()
        assert message.code == 200
        return protocol

    protocol = asyncio.run(read_first_response(kept_answer(b"answer") + b"JUNK\r\n\r\n"))
    assert protocol.should_close and protocol.exception() is None


def test_a_cookie_the_server_sets_is_not_sent_back() -> None:
    """Like stages 1 and 2, stage 3 keeps no cookies (see docs/contract.md)."""
    heads: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError):  # The client closed.
            while head := await reader.readuntil(b"\r\n\r\n"):
                heads.append(head.lower())
                status, link = b"200 OK", b'<a href="/next">next</a>'
                if head.startswith(b"GET /robots.txt"):
                    status, link = b"404 Not Found", b""
                writer.write(
                    b"HTTP/1.1 %s\r\nSet-Cookie: id=1; Path=/\r\nContent-Type: text/html\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (status, len(link), link)
                )
        writer.close()

    async def crawl() -> list[int | None]:
        async with serving(serve) as url:
            # A name: aiohttp's own jar would keep no cookie from an IP address.
            crawler = Crawler(url.replace("127.0.0.1", "localhost"), max_tasks=1, timeout=5)
            await crawler.crawl()
            return [stat.status for stat in crawler.done]

    assert asyncio.run(crawl()) == [200, 200]
    assert sum(head.startswith(b"get /next ") for head in heads) == 1
    assert not any(b"\r\ncookie:" in head for head in heads)
