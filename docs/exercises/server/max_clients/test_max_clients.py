"""Two clients hold their connections open; a third is refused, until one goes.

The test runs the server in a thread (``SiteServerThread``, with the
exercise's ``handler``) and talks to it over plain sockets.  A client
that has had its answer on a keep-alive connection is one the server is
serving: its task waits for the next request.  When a client leaves, the
server notices on its own time, so the test asks again, with a deadline,
until it is let in.
"""

import contextlib
import socket
import time
from collections.abc import Iterator
from types import ModuleType

import pytest

from shared.testsite.site import Site
from stage2_generators.server.http_server import Limits, SiteServerThread

DEADLINE = 5.0  # Seconds the test waits; never reached when all is well.
KEEP_ALIVE = b"GET / HTTP/1.1\r\nHost: test\r\n\r\n"
CLOSE = b"GET / HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"


@pytest.fixture
def port(exercise: ModuleType) -> Iterator[int]:
    """The port of a server that runs the exercise's handler."""
    limits = Limits(idle_timeout=DEADLINE * 2)
    with SiteServerThread(Site(), limits=limits, handler=exercise.handler) as s:
        yield s.port


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), DEADLINE)


def status(sock: socket.socket, request: bytes) -> str:
    """Send ``request``; return the status line of the one answer it gets."""
    sock.sendall(request)
    answer = b""
    with contextlib.suppress(TimeoutError, ConnectionError):
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    line = answer.partition(b"\r\n")[0].decode()
    return line or "no answer"


def newcomer(port: int) -> str:
    """Return the status line a new client gets."""
    with connect(port) as sock:
        return status(sock, CLOSE)


def test_a_client_over_the_limit_gets_503(
    port: int, exercise: ModuleType
) -> None:
    with contextlib.ExitStack() as stack:
        for _ in range(exercise.MAX_CLIENTS):
            sock = stack.enter_context(connect(port))
            assert status(sock, KEEP_ALIVE) == "HTTP/1.1 200 OK"
        got = newcomer(port)
    assert got.startswith("HTTP/1.1 503"), (
        f"{exercise.MAX_CLIENTS} clients were connected (MAX_CLIENTS), and "
        f"one more got: {got}.  Count the connections being served, and "
        f"answer 503 to a client over MAX_CLIENTS"
    )


def test_a_place_is_free_again_once_a_client_leaves(
    port: int, exercise: ModuleType
) -> None:
    with contextlib.ExitStack() as stack:
        for _ in range(exercise.MAX_CLIENTS):
            sock = stack.enter_context(connect(port))
            assert status(sock, KEEP_ALIVE) == "HTTP/1.1 200 OK"
        sock.close()  # The last one leaves.
        deadline = time.monotonic() + DEADLINE
        got = newcomer(port)
        while got != "HTTP/1.1 200 OK" and time.monotonic() < deadline:
            time.sleep(0.05)  # Polling: the server's task ends on its time.
            got = newcomer(port)
    assert got == "HTTP/1.1 200 OK", (
        f"a client left, and {DEADLINE:.0f} s later a new client still got: "
        f"{got}.  Count a connection out when it ends, however it ends "
        f"(a finally block)"
    )
