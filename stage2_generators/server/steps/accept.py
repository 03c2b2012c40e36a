"""Step 1 of the server: accept connections, one task for each.

``serve`` waits in ``sock_accept`` until a client knocks, and starts a
task for each connection, which runs ``shout``: it sends back what it
reads, in capitals, with the crawler's ``sock_recv`` and ``sock_sendall``.
A client may hang up at any moment: ``served`` ends its task quietly.
The program runs three clients at once, prints what they got back and
the time it took; with ``--port N``, it serves until Ctrl-C instead
(``command.py``, which every server step uses).

Still wrong: a client that sends and never reads keeps its task stuck in
``sock_sendall``, and one that sends nothing keeps its task waiting in
``sock_recv``, for as long as it stays connected.
"""

import contextlib
import socket
from collections.abc import Callable, Generator
from typing import Any

from stage2_generators.events import get_running_loop
from stage2_generators.server.steps.command import main_or_serve
from stage2_generators.tasks import create_task, gather

Coroutine = Generator[Any, Any, Any]  # A generator coroutine, to mypy.
Handler = Callable[[socket.socket], Coroutine]  # Serves one connection.


def shout(conn: socket.socket) -> Coroutine:
    """Serve one client: send back each piece it sends, in capitals."""
    loop = get_running_loop()
    with conn:
        while data := (yield from loop.sock_recv(conn, 1024)):
            yield from loop.sock_sendall(conn, data.upper())


def serve(listener: socket.socket, handler: Handler = shout) -> Coroutine:
    """Accept connections until cancelled; one task per connection."""
    try:
        while True:
            conn, _ = yield from get_running_loop().sock_accept(listener)
            create_task(served(handler, conn))
    finally:
        listener.close()


def served(handler: Handler, conn: socket.socket) -> Coroutine:
    """Run ``handler`` on ``conn``: a client may hang up at any moment."""
    with conn, contextlib.suppress(ConnectionError):  # Reset, broken pipe.
        yield from handler(conn)


def listen(port: int = 0) -> socket.socket:
    """Return a non-blocking listening socket on ``port`` (0: any free one)."""
    listener = socket.create_server(("127.0.0.1", port))
    listener.setblocking(False)
    return listener


def connect(port: int) -> Coroutine:
    """Return a socket connected to the server, the way the crawler connects."""
    sock = socket.socket()
    sock.setblocking(False)
    yield from get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    return sock


def client(port: int, words: str) -> Coroutine:
    """Send ``words`` and return the answer."""
    with (yield from connect(port)) as sock:
        yield from get_running_loop().sock_sendall(sock, words.encode())
        return (yield from get_running_loop().sock_recv(sock, 1024)).decode()


def main() -> Coroutine:
    listener = listen()
    server = create_task(serve(listener))
    words = ["hello", "from three", "clients at once"]
    port = listener.getsockname()[1]
    answers = yield from gather(*(client(port, w) for w in words))
    for sent, answer in zip(words, answers, strict=True):
        print(f"sent {sent!r}, got {answer!r}")
    server.cancel()


if __name__ == "__main__":
    main_or_serve(main, shout, serve)
