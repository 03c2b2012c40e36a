"""Helpers for stage 1's own tests: a scripted server and a one-fetch runner.

``ScriptedServer`` gives byte-level control over what a client sees: each
connection it accepts is handed to a script (send this, wait for that,
reset, never answer).  ``run_fetch`` runs one Fetcher on a fresh loop and
checks what every fetch must leave behind: exactly one callback, its socket
closed and unregistered, its timer cancelled.

The certificates in ``certs/`` exist only for these tests: ``ca.pem`` is a
test certificate authority and ``localhost.pem`` the certificate and key it
signed for localhost, 127.0.0.1 and ::1, valid until 2126.  They were made
with ``openssl req`` and ``openssl x509 -req``; the CA's key was thrown away.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stage1_callbacks.fetcher import Fetcher, HttpsFetcher, Resolver
from stage1_callbacks.loop import EventLoop

CERTS = Path(__file__).parent / "certs"
DEADLINE = 10.0  # Seconds before a test gives up waiting; never reached when all is well.

Script = Callable[[socket.socket, "ScriptedServer"], None]


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


def server_tls() -> ssl.SSLContext:
    """Return a server context with the test certificate for localhost."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(CERTS / "localhost.pem")
    return context


def client_tls() -> ssl.SSLContext:
    """Return a client context that trusts the test certificate authority only."""
    return ssl.create_default_context(cafile=CERTS / "ca.pem")


class Outcome:
    """What a fetch reported: the list of Fetchers its callback was called with."""

    def __init__(self, loop: EventLoop) -> None:
        self.loop = loop
        self.calls: list[Fetcher] = []

    def callback(self, fetcher: Fetcher) -> None:
        self.calls.append(fetcher)
        self.loop.stop()


def run_fetch(url: str, fetcher_class: type[Fetcher] = Fetcher, **options: Any) -> Fetcher:
    """Run one Fetcher on a fresh loop until it calls back, and check it cleaned up.

    Raises AssertionError when the fetch reports twice, or leaves a socket,
    a timer or a callback behind.
    """
    options.setdefault("timeout", DEADLINE)
    options.setdefault("max_size", 2**20)
    options.setdefault("resolver", Resolver())
    if fetcher_class is HttpsFetcher:
        options.setdefault("ssl_context", client_tls())
    loop = EventLoop()
    outcome = Outcome(loop)
    try:
        fetcher = fetcher_class(url, loop, outcome.callback, **options)
        fetcher.start()
        loop.run()  # Until the callback stops it, or the fetch's own timeout fires.
        # A second callback would be waiting in loop.ready now.
        assert not loop.has_work(), "the fetch left a socket, a timer or a callback behind"
    finally:
        loop.close()
    assert outcome.calls == [fetcher], "the fetch must call back exactly once"
    assert fetcher.done and fetcher.sock is None
    assert fetcher.timer is not None and fetcher.timer.cancelled
    assert (fetcher.response is None) != (fetcher.exception is None)
    return fetcher
