"""The Fetcher: one request over one non-blocking socket, every way it can end.

Each test runs one fetch with ``run_fetch``, which also checks that the
fetch called back exactly once and left no socket, timer or callback behind.
"""

from __future__ import annotations

import socket
import ssl
import struct
import threading
from typing import Any

import pytest

from shared.record.trace import Trace
from shared.web.http import BadResponse, ResponseParser, build_request
from shared.web.resolver import Resolver
from stage1_callbacks import fetcher as fetcher_module
from stage1_callbacks import tls as tls_module
from stage1_callbacks.fetcher import Fetcher
from stage1_callbacks.loop import EventLoop
from stage1_callbacks.tests.support import run_fetch
from stage1_callbacks.tls import HttpsFetcher
from tests.servers import (
    DEADLINE,
    ScriptedServer,
    answer,
    http_response,
    refused_port,
    silent_server,
)
from tests.tls import server_tls

PAGE = b'<html><a href="/next">next</a></html>'


def test_fetch_a_page() -> None:
    with ScriptedServer(answer(http_response(PAGE))) as server:
        fetcher = run_fetch(server.url + "page?q=1")
    assert fetcher.exception is None and fetcher.response is not None
    assert fetcher.response.status == 200
    assert fetcher.response.headers["content-type"] == "text/html"
    assert fetcher.response.body == PAGE
    assert server.requests == [build_request(server.url + "page?q=1")]


def test_body_until_the_connection_closes() -> None:
    response = b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n" + b"x" * 300_000
    with ScriptedServer(answer(response)) as server:
        fetcher = run_fetch(server.url)
    assert fetcher.response is not None and fetcher.response.body == b"x" * 300_000


def test_ipv6_address() -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    try:
        server = ScriptedServer(answer(http_response(PAGE)), family=socket.AF_INET6)
    except OSError:
        pytest.skip("cannot listen on ::1")
    with server:
        assert server.url.startswith("http://[::1]:")
        fetcher = run_fetch(server.url)
    assert fetcher.response is not None and fetcher.response.body == PAGE


# --- Turns of the loop -------------------------------------------------------------


class Steps(Trace):
    """A recorder that lists a fetch's phases and the loop's selects, in order."""

    def __init__(self) -> None:
        super().__init__("steps")
        self.steps: list[str] = []

    def begin(self, url: str, lane: object = None) -> None:
        self.steps.append("connect")

    def phase(self, url: str, name: str) -> None:
        if not self.steps or self.steps[-1] != name:  # As Trace: once per phase.
            self.steps.append(name)

    def end(self, url: str) -> None:
        self.steps.append("end")

    def waiting(self) -> None:
        self.steps.append("select")


def fetch_steps(url: str) -> tuple[Fetcher, list[str]]:
    """Fetch ``url`` on a loop of its own; return the Fetcher and the steps it took."""
    steps = Steps()
    loop = EventLoop(steps)
    fetcher = Fetcher(url, loop, lambda fetcher: loop.stop(), timeout=DEADLINE,
                      max_size=2**20, resolver=Resolver(), trace=steps)  # fmt: skip
    try:
        fetcher.start()
        loop.run()
    finally:
        loop.close()
    return fetcher, steps.steps


def test_a_connection_made_at_once_sends_at_once() -> None:
    # On the same machine the handshake is over before connect() returns: the
    # request goes out at once, not after a select() reports the socket writable.
    with ScriptedServer(answer(http_response(PAGE))) as server:
        fetcher, steps = fetch_steps(server.url)
    assert fetcher.response is not None and fetcher.response.body == PAGE
    assert steps[:4] == ["connect", "send", "wait", "select"]
    assert steps.index("read") < steps.index("end")


def test_a_connection_still_under_way_sends_once_writable(monkeypatch) -> None:
    monkeypatch.setattr(Fetcher, "is_connected", lambda fetcher: False)
    with ScriptedServer(answer(http_response(PAGE))) as server:
        fetcher, steps = fetch_steps(server.url)
    assert server.requests == [build_request(server.url)]
    assert fetcher.response is not None and fetcher.response.body == PAGE
    assert steps[:4] == ["connect", "select", "send", "wait"]


# --- Partial sends and dribbled responses ----------------------------------------


def test_request_sent_one_byte_at_a_time(monkeypatch) -> None:
    sends = []
    real_send = socket.socket.send

    def send_one_byte(sock: socket.socket, data: bytes, flags: int = 0) -> int:
        sends.append(bytes(data[:1]))
        return real_send(sock, data[:1], flags)

    with ScriptedServer(answer(http_response(PAGE))) as server:
        # The server answers with sendall(), which this does not touch.
        monkeypatch.setattr(socket.socket, "send", send_one_byte)
        fetcher = run_fetch(server.url)
        monkeypatch.undo()
    request = build_request(server.url)
    assert len(sends) == len(request), "one send per byte: every send was partial"
    assert b"".join(sends) == request
    assert server.requests == [request]
    assert fetcher.response is not None and fetcher.response.body == PAGE


class PieceCounter(Fetcher):
    """A Fetcher that records each piece of the response as it arrives."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pieces: list[bytes] = []
        self.arrived = threading.Condition()

    def received(self, data: bytes) -> None:
        with self.arrived:
            self.pieces.append(data)
            self.arrived.notify_all()
        super().received(data)

    def wait_for_bytes(self, count: int) -> None:
        """Block (in the server's thread) until ``count`` bytes have arrived."""
        with self.arrived:
            got = self.arrived.wait_for(lambda: sum(map(len, self.pieces)) >= count, DEADLINE)
        assert got, "the client stopped reading"


def test_response_dribbled_in_pieces() -> None:
    response = http_response(PAGE)
    pieces = [response[:10], response[10:40], response[40:41], response[41:]]
    fetchers: list[PieceCounter] = []

    def dribble(conn: socket.socket, server: ScriptedServer) -> None:
        server.read_request(conn)
        sent = 0
        for piece in pieces:
            conn.sendall(piece)
            sent += len(piece)
            fetchers[0].wait_for_bytes(sent)  # The next piece goes once this one arrived.

    class Recording(PieceCounter):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            fetchers.append(self)

    with ScriptedServer(dribble) as server:
        fetcher = run_fetch(server.url, Recording)
    assert isinstance(fetcher, PieceCounter)
    assert b"".join(fetcher.pieces) == response
    assert len(fetcher.pieces) >= len(pieces), "pieces never arrive together"
    assert fetcher.response is not None and fetcher.response.body == PAGE


def test_response_read_one_byte_at_a_time(monkeypatch) -> None:
    monkeypatch.setattr(fetcher_module, "RECV_SIZE", 1)
    response = http_response(PAGE)
    with ScriptedServer(answer(response)) as server:
        fetcher = run_fetch(server.url, PieceCounter)
    assert isinstance(fetcher, PieceCounter)
    assert len(fetcher.pieces) == len(response)  # The parser saw every byte alone.
    assert fetcher.response is not None and fetcher.response.body == PAGE


# --- Every way a fetch can fail ---------------------------------------------------


def test_connection_refused() -> None:
    with refused_port() as url:
        fetcher = run_fetch(url)
    assert isinstance(fetcher.exception, ConnectionRefusedError)


def test_connection_reset() -> None:
    def reset(conn: socket.socket, server: ScriptedServer) -> None:
        server.read_request(conn)
        # Linger on, with a zero timeout: close() sends a reset, not a FIN.
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    with ScriptedServer(reset) as server:
        fetcher = run_fetch(server.url)
    assert isinstance(fetcher.exception, ConnectionResetError)


def test_closed_before_the_response() -> None:
    with ScriptedServer(lambda conn, server: server.read_request(conn)) as server:
        fetcher = run_fetch(server.url)
    assert isinstance(fetcher.exception, BadResponse)
    assert "closed before" in str(fetcher.exception)


def test_timeout_waiting_to_connect_or_answer() -> None:
    with silent_server() as url:  # Listens, never accepts, never answers.
        fetcher = run_fetch(url, timeout=0.2)
    assert isinstance(fetcher.exception, TimeoutError)


def test_timeout_covers_the_whole_request() -> None:
    def half_an_answer(conn: socket.socket, server: ScriptedServer) -> None:
        server.read_request(conn)
        conn.sendall(http_response(PAGE)[:-5])
        server.stopping.wait(DEADLINE)  # The rest never comes.

    with ScriptedServer(half_an_answer) as server:
        fetcher = run_fetch(server.url, timeout=0.2)
    assert isinstance(fetcher.exception, TimeoutError)


@pytest.mark.parametrize(
    "response",
    [
        b"THIS IS NOT HTTP\r\n\r\n",
        b"HTTP/1.0 200 OK\r\nContent-Length: 100\r\n\r\nonly part of it",
        b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"HTTP/1.0 200 OK\r\nno colon here\r\n\r\n",
    ],
    ids=["garbage", "short-body", "bad-chunk", "bad-header"],
)
def test_malformed_response(response: bytes) -> None:
    with ScriptedServer(answer(response)) as server:
        fetcher = run_fetch(server.url)
    assert isinstance(fetcher.exception, BadResponse)


def test_too_large_is_cut_at_max_size() -> None:
    with ScriptedServer(answer(http_response(b"x" * 5000))) as server:
        fetcher = run_fetch(server.url, max_size=1000)
    assert fetcher.response is not None
    assert fetcher.response.truncated and fetcher.response.body == b"x" * 1000


class NoSuchHost(Resolver):
    def resolve(self, host: str, port: int) -> list:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")


def test_name_that_does_not_resolve() -> None:
    fetcher = run_fetch("http://no-such-host.invalid/", resolver=NoSuchHost())
    assert isinstance(fetcher.exception, socket.gaierror)


def test_name_that_cannot_be_encoded() -> None:
    fetcher = run_fetch("http://\u00e4..label/")  # IDNA refuses it before any lookup.
    assert isinstance(fetcher.exception, socket.gaierror)
    assert "bad host name" in str(fetcher.exception)


def test_next_address_after_a_refused_one() -> None:
    with refused_port() as refused, ScriptedServer(answer(http_response(PAGE))) as server:
        addresses = [
            (socket.AF_INET, 6, ("127.0.0.1", int(url.rsplit(":", 1)[1].strip("/"))))
            for url in (refused, server.url)
        ]

        class TwoAddresses(Resolver):
            def resolve(self, host: str, port: int) -> list:
                return addresses

        fetcher = run_fetch("http://two-addresses.test/", resolver=TwoAddresses())
    assert fetcher.response is not None and fetcher.response.body == PAGE


def test_resolver_remembers_answers(monkeypatch) -> None:
    lookups = []
    real_getaddrinfo = socket.getaddrinfo

    def counting_getaddrinfo(*args: Any, **kwargs: Any) -> Any:
        lookups.append(args[:2])
        return real_getaddrinfo(*args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", counting_getaddrinfo)
    resolver = Resolver()
    first = resolver.resolve("localhost", 80)
    assert resolver.resolve("localhost", 80) == first
    assert lookups == [(b"localhost", 80)]  # An ASCII name is passed as bytes.
    assert all(family in (socket.AF_INET, socket.AF_INET6) for family, _, _ in first)


def test_a_bug_while_reading_is_reported_once(monkeypatch) -> None:
    def buggy_feed_data(parser: ResponseParser, data: bytes) -> None:
        raise ZeroDivisionError("a bug in the parser")

    monkeypatch.setattr(ResponseParser, "feed_data", buggy_feed_data)
    with ScriptedServer(answer(http_response(PAGE))) as server:
        fetcher = run_fetch(server.url)
    assert isinstance(fetcher.exception, ZeroDivisionError)


# --- https --------------------------------------------------------------------------


def test_https_fetch() -> None:
    with ScriptedServer(answer(http_response(PAGE)), tls=server_tls()) as server:
        fetcher = run_fetch(server.url, HttpsFetcher)
    assert fetcher.response is not None and fetcher.response.body == PAGE
    assert server.requests == [build_request(server.url)]


def test_https_large_body_and_one_byte_reads(monkeypatch) -> None:
    monkeypatch.setattr(tls_module, "RECV_SIZE", 1)
    body = bytes(range(256)) * 200
    with ScriptedServer(answer(http_response(body)), tls=server_tls()) as server:
        fetcher = run_fetch(server.url, HttpsFetcher)
    assert fetcher.response is not None and fetcher.response.body == body


def test_https_certificate_that_does_not_verify() -> None:
    untrusting = ssl.create_default_context()  # The test authority is not in it.
    with ScriptedServer(answer(http_response(PAGE)), tls=server_tls()) as server:
        fetcher = run_fetch(server.url, HttpsFetcher, ssl_context=untrusting)
    assert isinstance(fetcher.exception, ssl.SSLCertVerificationError)


def test_https_to_a_plain_http_server() -> None:
    def no_tls(conn: socket.socket, server: ScriptedServer) -> None:
        conn.sendall(http_response(PAGE))  # At once: the client sent a TLS hello.

    with ScriptedServer(no_tls) as server:
        url = server.url.replace("http:", "https:")
        fetcher = run_fetch(url, HttpsFetcher)
    assert isinstance(fetcher.exception, ssl.SSLError)
