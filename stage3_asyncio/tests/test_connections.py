"""Stage 3's kept-alive connections: nothing a server sends unasked is read as an answer."""

from __future__ import annotations

import asyncio

import aiohttp

from stage3_asyncio.connections import CarefulConnector


def kept_answer(body: bytes) -> bytes:
    """Return a complete response that leaves the connection open."""
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


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

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
    try:
        async with aiohttp.ClientSession(connector=connector_class()) as session:
            async with session.get(url) as response:
                await response.read()
            first_read.set()
            await unasked_sent.wait()
            async with session.get(url) as response:
                return await response.read()
    finally:
        server.close()
        await server.wait_closed()


def test_a_kept_connection_with_unasked_bytes_is_not_reused() -> None:
    assert asyncio.run(second_answer(CarefulConnector)) == b"answer"


def test_without_the_check_aiohttp_reads_the_unasked_response() -> None:
    # Why CarefulConnector exists; if aiohttp ever checks this itself, this test says so.
    assert asyncio.run(second_answer(aiohttp.TCPConnector)) == b"unasked"
