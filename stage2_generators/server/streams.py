"""Streams: a reader and a writer for one connected socket.

The crawler reads and writes with ``sock_recv`` and ``sock_sendall``, which
is enough for a client that sends one request and reads one answer.  A
server talks with many clients at once and must not let a slow one hold
it up, so its writes are buffered: ``StreamWriter.write`` sends what the
socket takes at once, keeps the rest, and asks the loop to watch the
socket for "writable" only while something is kept.  ``drain`` is the
brake: it waits while the buffer is over a high-water mark, so a client
that stops reading stops the coroutine that writes to it instead of
filling memory.  ``StreamReader`` reads on demand with ``sock_recv`` and
keeps what it read but was not asked for, for ``readline`` and
``readuntil``.

The names and the behaviour are those of asyncio's streams.  Left out:
transports and protocols underneath (the reader and the writer use the
socket directly, so only one task should read at a time), TLS,
``write_eof``, ``start_tls``.  Added: ``StreamWriter.abort``, which asyncio
spells ``writer.transport.abort()``.
"""

from __future__ import annotations

import socket
import types
from collections.abc import Generator
from typing import Any

from stage2_generators.events import get_running_loop
from stage2_generators.futures import Future

DEFAULT_LIMIT = 64 * 1024  # Most bytes readuntil() looks through for a separator.
RECV_SIZE = 64 * 1024  # Bytes asked of the socket at a time.
HIGH_WATER = 64 * 1024  # drain() waits while more than this is buffered...
LOW_WATER = 16 * 1024  # ...until no more than this is left.


class IncompleteReadError(EOFError):
    """The peer closed the connection before the expected bytes arrived."""

    def __init__(self, partial: bytes, expected: int | None) -> None:
        wanted = "an end marker" if expected is None else f"{expected} bytes"
        super().__init__(f"{len(partial)} bytes read before the end of the stream, not {wanted}")
        self.partial = partial
        self.expected = expected


class LimitOverrunError(Exception):
    """The separator was not found within the reader's limit."""

    def __init__(self, message: str, consumed: int) -> None:
        super().__init__(message)
        self.consumed = consumed


# --8<-- [start:reader]
class StreamReader:
    """Read from a connected non-blocking socket, keeping what is not asked for yet."""

    def __init__(self, sock: socket.socket, limit: int = DEFAULT_LIMIT) -> None:
        self._sock = sock
        self._limit = limit
        self._buffer = bytearray()
        self._eof = False

    def at_eof(self) -> bool:
        """Tell whether the peer closed and everything was read."""
        return self._eof and not self._buffer

    @types.coroutine
    def _fill(self) -> Generator[Any, None, None]:
        """Wait for more bytes and keep them; note the end when the peer closed."""
        data = yield from get_running_loop().sock_recv(self._sock, RECV_SIZE)
        if data:
            self._buffer += data
        else:
            self._eof = True

    @types.coroutine
    def read(self, n: int = -1) -> Generator[Any, None, bytes]:
        """Return up to ``n`` bytes (all until the end if ``n`` < 0), b"" at the end."""
        if n < 0:
            while not self._eof:
                yield from self._fill()
            n = len(self._buffer)
        elif not self._buffer and not self._eof:
            yield from self._fill()
        data = bytes(self._buffer[:n])
        del self._buffer[:n]
        return data

    # --8<-- [end:reader]

    @types.coroutine
    def readexactly(self, n: int) -> Generator[Any, None, bytes]:
        """Return exactly ``n`` bytes.  Raises IncompleteReadError at the end first."""
        while len(self._buffer) < n:
            if self._eof:
                partial = bytes(self._buffer)
                self._buffer.clear()
                raise IncompleteReadError(partial, n)
            yield from self._fill()
        data = bytes(self._buffer[:n])
        del self._buffer[:n]
        return data

    # --8<-- [start:readuntil]
    @types.coroutine
    def readuntil(self, separator: bytes = b"\n") -> Generator[Any, None, bytes]:
        """Return the bytes up to and including ``separator``.

        Raises IncompleteReadError if the stream ends first, and
        LimitOverrunError (leaving the bytes in the buffer) if the limit
        is reached without a separator.
        """
        start = 0
        while (index := self._buffer.find(separator, start)) < 0:
            if len(self._buffer) > self._limit:
                raise LimitOverrunError("separator not found within the limit", len(self._buffer))
            if self._eof:
                partial = bytes(self._buffer)
                self._buffer.clear()
                raise IncompleteReadError(partial, None)
            # The separator may straddle what we have and what comes next.
            start = max(0, len(self._buffer) - len(separator) + 1)
            yield from self._fill()
        if index > self._limit:
            raise LimitOverrunError("separator found beyond the limit", index)
        end = index + len(separator)
        data = bytes(self._buffer[:end])
        del self._buffer[:end]
        return data

    @types.coroutine
    def readline(self) -> Generator[Any, None, bytes]:
        """Return one line with its b"\\n", or what is left at the end.

        Raises ValueError, dropping the line, when it is longer than the limit.
        """
        try:
            return (yield from self.readuntil(b"\n"))
        except IncompleteReadError as error:
            return error.partial
        except LimitOverrunError as error:
            if self._buffer.startswith(b"\n", error.consumed):
                del self._buffer[: error.consumed + 1]
            else:
                self._buffer.clear()
            raise ValueError(str(error)) from None

    # --8<-- [end:readuntil]


# --8<-- [start:writer]
class StreamWriter:
    """Write to a connected non-blocking socket through a buffer.

    Invariant: the loop watches the socket for writing exactly while the
    buffer holds bytes, and the socket is closed only by ``close`` (once
    the buffer is empty) or ``abort``: a failed send does not close it,
    since the connection's reader may be waiting on it (a reset socket is
    readable, so that reader learns the end by itself).
    """

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._fd = sock.fileno()  # The loop is told the number: cheaper to look up.
        self._loop = get_running_loop()
        self._buffer = bytearray()
        self._error: OSError | None = None  # Why sending failed, for drain() to raise.
        self._drain_waiter: Future | None = None
        self._closing = False
        self._closed = self._loop.create_future()

    def write(self, data: bytes) -> None:
        """Send ``data`` now if the socket takes it, else keep it to send when writable."""
        if self._closing or self._error:
            return  # As asyncio's transports, drop bytes written after the end.
        if not self._buffer:
            data = data[self._send(data) :]
            if not data or self._error:
                return
            self._loop.add_writer(self._fd, self._on_writable)
        self._buffer += data

    def _send(self, data: bytes | bytearray) -> int:
        """Send what the socket takes now and return how much; note a failure."""
        try:
            return self._sock.send(data)
        except BlockingIOError:
            return 0
        except OSError as error:  # The peer reset the connection: nothing more goes out.
            self._error = error
            self._buffer.clear()
            self._loop.remove_writer(self._fd)
            self._wake_drain_waiter()  # drain() raises the error.
            if self._closing:  # close() was called: nobody uses the socket any more.
                self._close_now()
            return 0

    def _on_writable(self) -> None:
        """Send from the buffer; stop watching the socket once it is empty."""
        del self._buffer[: self._send(self._buffer)]
        if len(self._buffer) <= LOW_WATER:
            self._wake_drain_waiter()
        if not self._buffer and self._sock.fileno() != -1:
            self._loop.remove_writer(self._fd)
            if self._closing:
                self._close_now()

    # --8<-- [end:writer]

    # --8<-- [start:drain]
    @types.coroutine
    def drain(self) -> Generator[Any, None, None]:
        """Wait until the buffer is back under the low-water mark, if it is over the high one.

        Raises ConnectionResetError (or the error sending met) when the
        connection is lost.
        """
        if len(self._buffer) > HIGH_WATER:
            self._drain_waiter = self._loop.create_future()
            try:
                yield from self._drain_waiter
            finally:
                self._drain_waiter = None
        if self._error is not None:
            raise ConnectionResetError(f"connection lost: {self._error}") from self._error

    def _wake_drain_waiter(self) -> None:
        """Let the coroutine waiting in drain() go on."""
        if self._drain_waiter is not None and not self._drain_waiter.done():
            self._drain_waiter.set_result(None)

    # --8<-- [end:drain]

    # --8<-- [start:close]
    def close(self) -> None:
        """Close the socket once the buffer is sent (at once if it is empty)."""
        if self._closing:
            return
        self._closing = True
        if not self._buffer:
            self._close_now()

    def abort(self) -> None:
        """Close the socket now, dropping what is still buffered."""
        self._closing = True
        self._buffer.clear()
        self._close_now()

    def _close_now(self) -> None:
        """Stop watching the socket, close it and wake whoever waits on it."""
        if self._sock.fileno() == -1:
            return
        self._loop.remove_writer(self._fd)
        self._sock.close()
        self._closing = True
        self._wake_drain_waiter()
        if not self._closed.done():
            self._closed.set_result(None)

    def is_closing(self) -> bool:
        """Tell whether close() or abort() was called or the connection was lost."""
        return self._closing or self._error is not None

    @types.coroutine
    def wait_closed(self) -> Generator[Any, None, None]:
        """Wait until the socket is closed."""
        if not self._closed.done():
            yield from self._closed

    # --8<-- [end:close]

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        """Return ``"peername"``, ``"sockname"`` or ``"socket"``, else ``default``."""
        if name == "socket":
            return self._sock
        if self._sock.fileno() == -1:
            return default
        if name == "peername":
            try:
                return self._sock.getpeername()
            except OSError:
                return default
        if name == "sockname":
            return self._sock.getsockname()
        return default

    def buffer_size(self) -> int:
        """Return how many bytes wait to be sent (asyncio: transport.get_write_buffer_size())."""
        return len(self._buffer)


@types.coroutine
def open_connection(
    host: str, port: int, *, limit: int = DEFAULT_LIMIT
) -> Generator[Any, None, tuple[StreamReader, StreamWriter]]:
    """Connect to ``host``:``port`` (an address, not a name); return a reader and a writer.

    Raises OSError.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        yield from get_running_loop().sock_connect(sock, (host, port))
    except BaseException:
        sock.close()
        raise
    return StreamReader(sock, limit), StreamWriter(sock)
