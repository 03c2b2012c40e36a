"""The server answers 413 to a too large body, at once, and serves the rest.

The test runs the server in a thread (``SiteServerThread``, with the
exercise's ``handler``) and talks to it over a plain socket, reading
until the server closes the connection.
"""

import socket
from collections.abc import Iterator
from types import ModuleType

import pytest

from shared.testsite.site import Site
from stage2_generators.server.http_server import Limits, SiteServerThread

IDLE_TIMEOUT = 2.0  # The server's: a request that never ends is cut off.
DEADLINE = 10.0  # Seconds the test waits for an answer; never reached.


@pytest.fixture
def port(exercise: ModuleType) -> Iterator[int]:
    """The port of a server that runs the exercise's handler."""
    limits = Limits(idle_timeout=IDLE_TIMEOUT)
    with SiteServerThread(Site(), limits=limits, handler=exercise.handler) as s:
        yield s.port


def send(port: int, request: bytes) -> str:
    """Send ``request``; return the answer's status line, or what happened."""
    answer = b""
    with socket.create_connection(("127.0.0.1", port), DEADLINE) as sock:
        sock.sendall(request)
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except TimeoutError:
            return f"no end of the answer in {DEADLINE:.0f} s"
        except ConnectionError as error:
            return f"{type(error).__name__} and no answer"
    return answer.partition(b"\r\n")[0].decode() or "the connection closed"


def post(body_size: int, body: bytes = b"") -> bytes:
    """Return a POST request announcing ``body_size`` bytes, with ``body``."""
    head = (
        f"POST / HTTP/1.1\r\nHost: test\r\nConnection: close\r\n"
        f"Content-Length: {body_size}\r\n\r\n"
    )
    return head.encode() + body


def test_a_too_large_body_gets_413_before_it_is_sent(
    port: int, exercise: ModuleType
) -> None:
    size = 1_000_000
    got = send(port, post(size))  # The head only: the body never comes.
    assert got.startswith("HTTP/1.1 413"), (
        f"to a request whose head says Content-Length: {size} (over "
        f"MAX_BODY = {exercise.MAX_BODY}), the server answered: {got}.  "
        f"Answer 413 as soon as the head is read, before reading the "
        f"body (look at the headers in on_headers_complete), then close"
    )


def test_a_body_of_max_body_bytes_is_read(
    port: int, exercise: ModuleType
) -> None:
    size = exercise.MAX_BODY
    got = send(port, post(size, b"x" * size))
    assert got.startswith("HTTP/1.1 405"), (
        f"a body of exactly MAX_BODY = {size} bytes is allowed: the site "
        f"should answer it (405: it takes no POST), not: {got}"
    )


def test_a_get_is_served(port: int) -> None:
    got = send(
        port, b"GET / HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
    )
    assert got == "HTTP/1.1 200 OK", got
