"""A slow server that holds every fetch until all of them are in flight.

For the memory and C10K scenarios: the home page links to ``/s/0`` ...
``/s/{N-1}``, and the server answers none of those until ``N`` requests are
waiting (or until no new one has come for ``--idle`` seconds: a crawler
that cannot open ``N`` connections still finishes).  Then it prints
``READY <count>`` and waits for a line on standard input (the benchmark
reads the crawler's memory meanwhile), answers every request and from then
on answers at once.  It is a bare asyncio Protocol rather than aiohttp so
that 10 000 connections cost the server little.

    python -m shared.bench.slow --links 10000
"""

from __future__ import annotations

import argparse
import asyncio
import sys

HOME = "/"
OK_BODY = b"<!DOCTYPE html><html><body><p>done</p></body></html>\n"


def http_response(body: bytes) -> bytes:
    """Return an HTTP/1.0 200 response carrying an HTML ``body``."""
    head = (
        "HTTP/1.0 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class Barrier:
    """The requests being held, and whether they have been released."""

    def __init__(self, target: int, idle: float) -> None:
        self.target = target
        self.idle = idle
        self.held: list[asyncio.Transport] = []
        self.released = False
        self.most = 0  # The most requests held at once.
        self.arrived = asyncio.Event()  # Set on each new held request.
        self.ok = http_response(OK_BODY)

    def hold(self, transport: asyncio.Transport) -> None:
        """Hold a request until release, or answer it if released already."""
        if self.released:
            self.answer(transport)
            return
        self.held.append(transport)
        self.most = max(self.most, len(self.held))
        self.arrived.set()

    def answer(self, transport: asyncio.Transport) -> None:
        if not transport.is_closing():
            transport.write(self.ok)
            transport.close()

    async def wait_then_release(self) -> None:
        """Wait for the target (or for arrivals to stop), report, await the go, answer all."""
        while len(self.held) < self.target:
            self.arrived.clear()
            try:
                await asyncio.wait_for(self.arrived.wait(), self.idle)
            except TimeoutError:
                if self.held:
                    break  # Arrivals stopped short of the target.
        print("READY", len(self.held), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        self.released = True
        for transport in self.held:
            self.answer(transport)
        self.held.clear()


class SlowProtocol(asyncio.Protocol):
    """Read one request head, then answer the home page or hold the request."""

    def __init__(self, barrier: Barrier, home: bytes) -> None:
        self.barrier = barrier
        self.home = home
        self.buffer = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)  # A TCP server's always is.
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if b"\r\n\r\n" not in self.buffer:
            return
        path = self.buffer.split(b" ", 2)[1]
        self.buffer = b""
        if path == HOME.encode():
            self.transport.write(self.home)
            self.transport.close()
        else:
            self.barrier.hold(self.transport)


async def serve(links: int, idle: float) -> None:
    """Serve until standard input closes after the release."""
    barrier = Barrier(links, idle)
    page = "".join(f'<a href="/s/{i}">{i}</a>\n' for i in range(links))
    home = http_response(f"<!DOCTYPE html><html><body>{page}</body></html>".encode())
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: SlowProtocol(barrier, home), "127.0.0.1", 0, backlog=65535
    )
    print("PORT", server.sockets[0].getsockname()[1], flush=True)
    await barrier.wait_then_release()
    print("MOST", barrier.most, flush=True)
    await loop.run_in_executor(None, sys.stdin.read)  # Until the parent closes it.
    server.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m shared.bench.slow")
    parser.add_argument("--links", type=int, default=1000, help="fetches to hold at once")
    parser.add_argument("--idle", type=float, default=5.0, help="give up waiting after this")
    args = parser.parse_args(argv)
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    asyncio.run(serve(args.links, args.idle))


if __name__ == "__main__":
    main()
