"""Servers for tests: pages added on the fly, and sockets that misbehave.

``PageServer`` serves pages that a test adds while the server runs, like the
500 Lines crawler's own tests did, and counts what it was asked.  The other
helpers give the network failures a crawler must survive: a port that
refuses connections and a server that accepts and never answers.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator

from aiohttp import web

from shared.server import ServerThread

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class PageServer(ServerThread):
    """A local server whose pages can be added while it runs.

    Every request is counted by path (``requests``), and the number of
    requests being handled at once is tracked (``in_flight``,
    ``max_in_flight``).  Unknown paths answer 404.
    """

    def __init__(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        super().__init__(app)
        self.handlers: dict[str, Handler] = {}
        self.requests: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0

    def add_handler(self, path: str, handler: Handler) -> str:
        """Serve ``path`` with ``handler``; return the page's absolute URL."""
        self.handlers[path] = handler
        return self.url.rstrip("/") + path

    def add_page(
        self,
        path: str = "/",
        links: Iterable[str] = (),
        body: bytes | None = None,
        content_type: str = "text/html; charset=utf-8",
        status: int = 200,
    ) -> str:
        """Serve a page linking to ``links`` (or with ``body``); return its URL."""
        if body is None:
            body = "".join(f'<a href="{link}"></a>' for link in links).encode()

        async def handler(request: web.Request) -> web.StreamResponse:
            return web.Response(status=status, body=body, headers={"Content-Type": content_type})

        return self.add_handler(path, handler)

    def add_redirect(self, path: str, location: str, status: int = 302) -> str:
        """Serve a redirect to ``location``; return the redirecting URL."""

        async def handler(request: web.Request) -> web.StreamResponse:
            return web.Response(status=status, headers={"Location": location})

        return self.add_handler(path, handler)

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        self.requests[request.path] += 1
        handler = self.handlers.get(request.path)
        if handler is None:
            raise web.HTTPNotFound()
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await handler(request)
        finally:
            self.in_flight -= 1


@contextlib.contextmanager
def silent_server() -> Iterator[str]:
    """Yield the URL of a server that accepts connections and never answers.

    The socket listens but never calls accept(): the kernel completes each
    connection, and then nothing is ever sent.
    """
    with socket.create_server(("127.0.0.1", 0), backlog=128) as listener:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/"


@contextlib.contextmanager
def refused_port() -> Iterator[str]:
    """Yield the URL of a port that refuses connections.

    The socket is bound, so no other program takes the port, but it does not
    listen, so the kernel answers a connection attempt with a reset.
    """
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{bound.getsockname()[1]}/"


class RawServer:
    """A server that answers every connection with fixed bytes, then closes.

    For responses aiohttp would refuse to send: no Content-Type, a broken
    status line, a body shorter than its Content-Length.  It reads the
    request head first and counts the connections it served.
    """

    def __init__(self, answer: bytes) -> None:
        self.answer = answer
        self.connections = 0
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=128)
        self._listener.settimeout(0.05)  # How often the thread checks for stop.
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/"

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()
        self._listener.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            with conn:
                self.connections += 1
                conn.settimeout(5)
                request = b""
                with contextlib.suppress(OSError):
                    while b"\r\n\r\n" not in request:
                        chunk = conn.recv(4096)
                        if not chunk:
                            break
                        request += chunk
                    conn.sendall(self.answer)
