"""Servers for tests: pages added on the fly, and sockets that misbehave.

``PageServer`` serves pages that a test adds while the server runs, like the
500 Lines crawler's own tests did, and counts what it was asked.  The other
helpers give the network failures a crawler must survive: a port that
refuses connections, a server that accepts and never answers, and
``ScriptedServer``, which hands each connection to a script for byte-level
control (responses aiohttp would refuse to send, resets, TLS).
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator

from aiohttp import web

from shared.testsite.server import ServerThread

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
DEADLINE = 10.0  # Seconds before a test gives up waiting; never reached when all is well.


class PageServer(ServerThread):
    """A local server whose pages can be added while it runs.

    Every request is counted by path (``requests``), its target kept as
    sent, percent-encoding and query included (``targets``), and the number of
    requests being handled at once is tracked (``in_flight``,
    ``max_in_flight``).  Unknown paths answer 404.
    """

    def __init__(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        super().__init__(app)
        self.handlers: dict[str, Handler] = {}
        self.requests: Counter[str] = Counter()
        self.targets: list[str] = []
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
        self.targets.append(request.raw_path)
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


Script = Callable[[socket.socket, "ScriptedServer"], object]  # What it returns is unused.


class ScriptedServer:
    """Accept connections on a thread and run ``script(conn, server)`` for each, in turn.

    ``requests`` collects the request heads read by ``read_request``;
    ``stopping`` is set when the test is over, so a script that waits on it
    (a server that never answers) ends then.
    """

    def __init__(
        self,
        script: Script,
        family: socket.AddressFamily = socket.AF_INET,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.script = script
        self.tls = tls
        self.requests: list[bytes] = []
        self.stopping = threading.Event()
        host = "::1" if family == socket.AF_INET6 else "127.0.0.1"
        self.listener = socket.create_server((host, 0), family=family, backlog=16)
        port = self.listener.getsockname()[1]
        scheme = "https" if tls else "http"
        self.url = f"{scheme}://[{host}]:{port}/" if ":" in host else f"{scheme}://{host}:{port}/"
        self.thread = threading.Thread(target=self.serve, daemon=True)

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stopping.set()
        # Wake accept() with a connection of our own; the thread then sees stopping.
        with contextlib.suppress(OSError):
            socket.create_connection(self.listener.getsockname()[:2], timeout=DEADLINE).close()
        self.thread.join(DEADLINE)
        self.listener.close()

    def serve(self) -> None:
        while True:
            conn, _ = self.listener.accept()
            if self.stopping.is_set():
                conn.close()
                return
            conn.settimeout(DEADLINE)
            with contextlib.suppress(OSError), self.wrap(conn) as conn:
                self.script(conn, self)

    def wrap(self, conn: socket.socket) -> socket.socket:
        """Return ``conn``, wrapped in TLS when the server speaks it."""
        if self.tls is None:
            return conn
        try:
            return self.tls.wrap_socket(conn, server_side=True)
        except OSError:
            conn.close()  # The client refused the certificate: nothing to serve.
            raise

    def read_request(self, conn: socket.socket) -> bytes:
        """Read a request head from ``conn``, remember it and return it."""
        request = b""
        while b"\r\n\r\n" not in request:
            data = conn.recv(4096)
            if not data:
                break
            request += data
        self.requests.append(request)
        return request


def answer(response: bytes) -> Script:
    """Return a script that reads the request and sends ``response``."""

    def script(conn: socket.socket, server: ScriptedServer) -> None:
        server.read_request(conn)
        conn.sendall(response)

    return script


def http_response(body: bytes, status: str = "200 OK", content_type: str = "text/html") -> bytes:
    """Return the bytes of a complete HTTP/1.0 response with ``body``."""
    head = f"HTTP/1.0 {status}\r\nContent-Type: {content_type}\r\n"
    head += f"Content-Length: {len(body)}\r\n\r\n"
    return head.encode("ascii") + body


def poll(condition: Callable[[], bool], deadline: float = 60.0) -> bool:
    """Return True as soon as ``condition()`` holds, False after the deadline."""
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > end:
            return False
        threading.Event().wait(0.01)
    return True
