"""sock_accept, the reader and the buffered writer, and the TCP server.

Modelled on CPython's ``test_asyncio/test_streams.py`` and
``test_server.py``, run on stage 2's own loop over socket pairs and real
listening sockets on 127.0.0.1.
"""

from __future__ import annotations

import errno
import logging
import os
import selectors
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from stage2_generators.futures import CancelledError
from stage2_generators.loop import EventLoop
from stage2_generators.server.streams import (
    HIGH_WATER,
    LOW_WATER,
    IncompleteReadError,
    LimitOverrunError,
    StreamReader,
    StreamWriter,
    open_connection,
)
from stage2_generators.server.tcp import Server, start_server
from stage2_generators.tasks import gather, sleep
from stage2_generators.tests.support import run_briefly

BIG = 4 * 2**20  # More than the kernel buffers of a socket pair hold.


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    """Two connected non-blocking sockets: ours, and the peer's."""
    ours, peer = socket.socketpair()
    ours.setblocking(False)
    peer.setblocking(False)
    yield ours, peer
    ours.close()
    peer.close()


def watched_for_writing(loop: EventLoop, sock: socket.socket) -> bool:
    """Tell whether the loop's selector watches ``sock`` for writing."""
    try:
        return bool(loop._selector.get_key(sock).events & selectors.EVENT_WRITE)
    except (KeyError, ValueError):  # Not registered, or already closed.
        return False


def read_all(loop: EventLoop, sock: socket.socket, count: int):
    """Read ``count`` bytes from ``sock`` on the loop (fewer if it ends first)."""
    received = bytearray()
    while len(received) < count:
        try:
            data = yield from loop.sock_recv(sock, 2**20)
        except ConnectionResetError:
            break
        if not data:
            break
        received += data
    return bytes(received)


def in_loop(loop: EventLoop, function):
    """Run ``function()`` inside a task (a writer needs a running loop) and return its result."""

    def body():
        return function()
        yield  # A generator, so that it runs as a task.

    return loop.run_until_complete(body())


# --- sock_accept -----------------------------------------------------------------------


def test_sock_accept_returns_a_non_blocking_connection(loop: EventLoop) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener, socket.socket() as client:
        listener.setblocking(False)
        client.setblocking(False)

        def main():
            accepting = loop.create_task(loop.sock_accept(listener))
            yield from loop.sock_connect(client, listener.getsockname())
            return (yield from accepting)

        conn, address = loop.run_until_complete(main())
        with conn:
            assert address == client.getsockname()
            assert conn.getblocking() is False
            assert not loop._selector.get_map()  # The listener is no longer watched.


# --- StreamReader ------------------------------------------------------------------


def test_reader_reads_lines_separators_counts_and_the_rest(loop: EventLoop, pair) -> None:
    ours, peer = pair
    peer.sendall(b"line one\nrest|tail")
    peer.shutdown(socket.SHUT_WR)
    reader = StreamReader(ours)

    def main():
        parts = [(yield from reader.readline()), (yield from reader.readuntil(b"|"))]
        parts += [(yield from reader.readexactly(2)), (yield from reader.read())]
        return parts + [(yield from reader.read(10))]

    assert loop.run_until_complete(main()) == [b"line one\n", b"rest|", b"ta", b"il", b""]
    assert reader.at_eof()


def test_readuntil_finds_a_separator_split_between_two_reads(loop: EventLoop, pair) -> None:
    ours, peer = pair
    reader = StreamReader(ours)
    task = loop.create_task(reader.readuntil(b"\r\n"))
    peer.send(b"abc\r")
    while not reader._buffer:  # Until the task has read the first half.
        run_briefly(loop)
    peer.send(b"\ndef")
    assert loop.run_until_complete(task) == b"abc\r\n"
    assert loop.run_until_complete(reader.read(10)) == b"def"


def test_readuntil_at_the_end_raises_incomplete_read(loop: EventLoop, pair) -> None:
    ours, peer = pair
    peer.sendall(b"no separator")
    peer.shutdown(socket.SHUT_WR)
    with pytest.raises(IncompleteReadError) as caught:
        loop.run_until_complete(StreamReader(ours).readuntil(b"\n"))
    assert (caught.value.partial, caught.value.expected) == (b"no separator", None)


def test_readexactly_at_the_end_raises_incomplete_read(loop: EventLoop, pair) -> None:
    ours, peer = pair
    peer.sendall(b"abc")
    peer.shutdown(socket.SHUT_WR)
    with pytest.raises(IncompleteReadError) as caught:
        loop.run_until_complete(StreamReader(ours).readexactly(5))
    assert (caught.value.partial, caught.value.expected) == (b"abc", 5)


def test_readuntil_over_the_limit_keeps_the_bytes(loop: EventLoop, pair) -> None:
    ours, peer = pair
    peer.sendall(b"x" * 100 + b"\n")
    reader = StreamReader(ours, limit=10)
    with pytest.raises(LimitOverrunError):
        loop.run_until_complete(reader.readuntil(b"\n"))
    assert loop.run_until_complete(reader.read(5)) == b"xxxxx"


def test_readline_over_the_limit_drops_the_line(loop: EventLoop, pair) -> None:
    ours, peer = pair
    peer.sendall(b"x" * 100 + b"\nnext\n")
    reader = StreamReader(ours, limit=10)
    with pytest.raises(ValueError, match="limit"):
        loop.run_until_complete(reader.readline())
    assert loop.run_until_complete(reader.readline()) == b"next\n"


# --- StreamWriter ----------------------------------------------------------------------


def test_write_sends_at_once_when_the_socket_takes_it(loop: EventLoop, pair) -> None:
    ours, peer = pair
    writer = in_loop(loop, lambda: StreamWriter(ours))
    writer.write(b"hello")
    assert writer.buffer_size() == 0
    assert not watched_for_writing(loop, ours)
    assert loop.run_until_complete(read_all(loop, peer, 5)) == b"hello"


def test_writer_watches_for_writable_only_while_it_holds_bytes(loop: EventLoop, pair) -> None:
    ours, peer = pair
    writer = in_loop(loop, lambda: StreamWriter(ours))
    writer.write(b"x" * BIG)  # More than the socket takes: the rest is kept.
    assert 0 < writer.buffer_size() < BIG
    assert watched_for_writing(loop, ours)
    assert len(loop.run_until_complete(read_all(loop, peer, BIG))) == BIG
    assert writer.buffer_size() == 0
    assert not watched_for_writing(loop, ours)


def test_drain_waits_over_high_water_until_low_water(loop: EventLoop, pair) -> None:
    ours, peer = pair
    writer = in_loop(loop, lambda: StreamWriter(ours))
    left_when_drained = []

    def drainer():
        yield from writer.drain()
        left_when_drained.append(writer.buffer_size())

    writer.write(b"x" * BIG)
    assert writer.buffer_size() > HIGH_WATER
    task = loop.create_task(drainer())
    for _ in range(5):
        run_briefly(loop)
    assert not task.done()  # Nobody reads the peer's end: the writer must wait.
    loop.run_until_complete(gather(task, read_all(loop, peer, BIG)))
    assert left_when_drained[0] <= LOW_WATER


def test_drain_does_not_wait_under_high_water(loop: EventLoop, pair) -> None:
    ours, peer = pair
    writer = in_loop(loop, lambda: StreamWriter(ours))
    writer.write(b"x" * HIGH_WATER)  # The socket may or may not take it all.
    task = loop.create_task(writer.drain())
    run_briefly(loop)
    assert task.done()


def test_drain_raises_when_the_peer_has_gone(loop: EventLoop, pair) -> None:
    ours, peer = pair
    writer = in_loop(loop, lambda: StreamWriter(ours))
    writer.write(b"x" * BIG)
    peer.close()  # With unread bytes: the kernel resets the connection.
    with pytest.raises(ConnectionResetError, match="connection lost"):
        loop.run_until_complete(writer.drain())
    assert writer.is_closing()
    assert not watched_for_writing(loop, ours)
    assert ours.fileno() != -1  # Until its owner closes it: a reader may wait on it.
    writer.close()
    loop.run_until_complete(writer.wait_closed())
    assert ours.fileno() == -1


def test_a_failed_send_leaves_the_socket_to_the_reader_waiting_on_it(loop: EventLoop, pair) -> None:
    # The writer closed the socket when a send failed, while the reader
    # waited on it: the reader then read from a closed socket (EBADF), and
    # the number of the closed socket stayed in the selector.
    ours, peer = pair
    reader, writer = in_loop(loop, lambda: (StreamReader(ours), StreamWriter(ours)))
    writer.write(b"x" * BIG)  # Held in the buffer: the peer does not read.
    reading = loop.create_task(reader.read(100))
    run_briefly(loop)  # The reader waits for the socket now.
    peer.close()  # With unread bytes: a reset, both readable and writable (EPIPE).
    with pytest.raises(ConnectionResetError):  # What the socket says, not EBADF.
        loop.run_until_complete(reading)
    assert ours.fileno() != -1 and writer.is_closing()
    writer.close()
    assert ours.fileno() == -1 and not loop._selector.get_map()


def test_close_sends_the_buffer_before_closing(loop: EventLoop, pair) -> None:
    ours, peer = pair
    writer = in_loop(loop, lambda: StreamWriter(ours))
    writer.write(b"x" * BIG)
    writer.close()
    assert writer.is_closing() and ours.fileno() != -1
    writer.write(b"dropped")  # After close(): dropped, as asyncio does.
    assert len(loop.run_until_complete(read_all(loop, peer, BIG + 1))) == BIG
    loop.run_until_complete(writer.wait_closed())
    assert ours.fileno() == -1


def test_abort_drops_the_buffer(loop: EventLoop, pair) -> None:
    ours, peer = pair
    writer = in_loop(loop, lambda: StreamWriter(ours))
    writer.write(b"x" * BIG)
    writer.abort()
    assert ours.fileno() == -1 and writer.buffer_size() == 0
    assert len(loop.run_until_complete(read_all(loop, peer, BIG))) < BIG


# --- start_server and Server ----------------------------------------------------------------


def shout(reader: StreamReader, writer: StreamWriter):
    """Answer each line in capitals until the client closes."""
    while line := (yield from reader.readline()):
        writer.write(line.upper())
        yield from writer.drain()


def port_of(server: Server) -> int:
    return server.sockets[0].getsockname()[1]


def talk(port: int, lines: list[bytes]):
    """Connect, send each line and read its answer, then close."""
    reader, writer = yield from open_connection("127.0.0.1", port)
    answers = []
    for line in lines:
        writer.write(line)
        answers.append((yield from reader.readline()))
    writer.close()
    yield from writer.wait_closed()
    return answers


def test_each_client_is_served_by_a_task_of_its_own(loop: EventLoop) -> None:
    def main():
        server = yield from start_server(shout, "127.0.0.1", 0)
        port = port_of(server)
        talks = [talk(port, [f"{name} {n}\n".encode() for n in range(3)]) for name in "abc"]
        answers = yield from gather(*talks)
        server.close()
        yield from server.wait_closed()
        return answers, server

    answers, server = loop.run_until_complete(main())
    assert answers[1] == [b"B 0\n", b"B 1\n", b"B 2\n"]
    assert server.sockets == () and not server.is_serving()
    assert not loop._selector.get_map()


def test_close_stops_accepting_and_wait_closed_waits_for_clients(loop: EventLoop) -> None:
    def main():
        server = yield from start_server(shout, "127.0.0.1", 0)
        reader, writer = yield from open_connection("127.0.0.1", port_of(server))
        writer.write(b"before\n")
        first = yield from reader.readline()
        server.close()
        waiting = loop.create_task(server.wait_closed())
        writer.write(b"after close\n")  # The open connection goes on.
        second = yield from reader.readline()
        closed_too_soon = waiting.done()
        writer.close()
        yield from waiting
        return first, second, closed_too_soon

    assert loop.run_until_complete(main()) == (b"BEFORE\n", b"AFTER CLOSE\n", False)


def test_close_clients_ends_open_connections(loop: EventLoop) -> None:
    def main():
        server = yield from start_server(shout, "127.0.0.1", 0)
        reader, writer = yield from open_connection("127.0.0.1", port_of(server))
        writer.write(b"hi\n")
        yield from reader.readline()
        server.close()
        server.close_clients()
        yield from server.wait_closed()
        end = yield from reader.read()
        writer.close()
        return end

    assert loop.run_until_complete(main()) == b""


def test_serve_forever_closes_the_server_when_cancelled(loop: EventLoop) -> None:
    def main():
        server = yield from start_server(shout, "127.0.0.1", 0)
        serving = loop.create_task(server.serve_forever())
        assert (yield from talk(port_of(server), [b"x\n"])) == [b"X\n"]
        serving.cancel()
        with pytest.raises(CancelledError):
            yield from serving
        return server

    server = loop.run_until_complete(main())
    assert not server.is_serving() and server.sockets == ()


def test_an_error_in_client_connected_is_reported_and_closes_the_connection(
    loop: EventLoop,
) -> None:
    reported = []
    loop.set_exception_handler(lambda loop, context: reported.append(context))

    def broken(reader: StreamReader, writer: StreamWriter):
        yield from reader.readline()
        raise ValueError("a bug in the handler")

    def main():
        server = yield from start_server(broken, "127.0.0.1", 0)
        reader, writer = yield from open_connection("127.0.0.1", port_of(server))
        writer.write(b"boom\n")
        end = yield from reader.read()
        writer.close()
        server.close()
        yield from server.wait_closed()
        return end

    assert loop.run_until_complete(main()) == b""
    assert [type(context["exception"]) for context in reported] == [ValueError]


class FailingListener(socket.socket):
    """A listening socket whose accept() first fails with each of ``errors``."""

    errors: list[int]

    def accept(self) -> tuple[socket.socket, Any]:
        if self.errors:
            number = self.errors.pop(0)
            raise OSError(number, os.strerror(number))
        return super().accept()


@pytest.mark.parametrize(
    "number",
    [errno.ECONNABORTED, errno.EPERM, errno.EPROTO, errno.EMFILE, errno.EINVAL],
    ids=errno.errorcode.get,
)
def test_a_failed_accept_is_logged_and_the_server_goes_on(
    loop: EventLoop, number: int, caplog: pytest.LogCaptureFixture
) -> None:
    # Any error but EMFILE, ENFILE and ENOBUFS ended the accepting task:
    # the server stayed up, accepting no one, for good.
    reported = []
    loop.set_exception_handler(lambda loop, context: reported.append(context))
    listener = FailingListener()
    listener.errors = [number]
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.setblocking(False)

    def main():
        server = Server(listener, shout)
        server.accept_retry_delay = 0  # The pause after an error that is no client's own.
        while listener.errors:
            yield from sleep(0)
        yield from sleep(0)  # The accepting task has handled the error.
        serving = server.is_serving()
        answers = (yield from talk(port_of(server), [b"x\n"])) if serving else None
        server.close()
        yield from server.wait_closed()
        return serving, answers

    with caplog.at_level(logging.INFO, logger="stage2_generators"):
        assert loop.run_until_complete(main()) == (True, [b"X\n"])
    said = [record.getMessage() for record in caplog.records]
    said += [str(context["exception"]) for context in reported]  # An unexpected error.
    assert len(said) == 1 and os.strerror(number) in said[0]


def test_start_server_on_a_port_in_use_raises(loop: EventLoop) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(OSError):
            loop.run_until_complete(start_server(shout, "127.0.0.1", port))
