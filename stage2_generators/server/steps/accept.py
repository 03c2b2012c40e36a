"""Step 1 of the server: accept connections, one task for each.

The crawler's loop can wait for a listening socket as well as for a
connected one: ``sock_accept`` waits until a client knocks.  ``serve``
accepts in a loop and starts a new task for each connection, and
``shout`` serves one client: it reads, and sends back what it read in
capitals, with the same ``sock_recv`` and ``sock_sendall`` as the
crawler's fetch.  Each conversation reads top to bottom however many
clients talk at once.

The program starts the server on a free port, runs three clients at once,
prints what each got back, and stops.

Still wrong: ``sock_sendall`` holds the task until the client has taken
every byte, so a client that does not read keeps its task (and the whole
answer) waiting; and a client that sends nothing keeps its task forever.
"""

import socket
from collections.abc import Callable, Generator
from typing import Any

from stage2_generators.events import get_running_loop
from stage2_generators.loop import run
from stage2_generators.tasks import create_task, gather

Coroutine = Generator[Any, Any, Any]  # A generator coroutine, to the type checker.


def shout(conn: socket.socket) -> Coroutine:
    """Serve one client: send back each piece it sends, in capitals."""
    loop = get_running_loop()
    with conn:
        while data := (yield from loop.sock_recv(conn, 1024)):
            yield from loop.sock_sendall(conn, data.upper())


def serve(
    listener: socket.socket, handler: Callable[[socket.socket], Coroutine] = shout
) -> Coroutine:
    """Accept connections until cancelled; one task per connection."""
    loop = get_running_loop()
    try:
        while True:
            conn, _ = yield from loop.sock_accept(listener)
            create_task(handler(conn))
    finally:
        listener.close()


def listen() -> socket.socket:
    """Return a non-blocking listening socket on a free port of 127.0.0.1."""
    listener = socket.create_server(("127.0.0.1", 0))
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
    port = listener.getsockname()[1]
    words = ["hello", "from three", "clients at once"]
    answers = yield from gather(*(client(port, w) for w in words))
    for sent, answer in zip(words, answers, strict=True):
        print(f"sent {sent!r}, got {answer!r}")
    server.cancel()


if __name__ == "__main__":
    run(main())
