"""Step 2 of the server: buffered writes, watched for writable only when needed.

``sock_sendall`` makes the task wait until the client has taken every
byte.  A server would rather hand its answer over and go on.  ``Writer``
sends what the socket takes at once and keeps the rest in a buffer; only
while the buffer holds bytes does it ask the loop to call ``on_writable``
when the socket can take more (``add_writer``), and it stops the watch as
soon as the buffer is empty (``remove_writer``).  A socket that is
watched for writable while there is nothing to write would wake the loop
on every turn: a busy loop again.

The program sends a 4 MB answer to a client that does not read yet, looks
at the writer, lets the client read everything and looks again.

Still wrong: nothing stops a task from writing faster than its client
reads, so the buffer can grow without limit.
"""

import contextlib
import selectors
import socket

from stage2_generators.events import get_running_loop
from stage2_generators.loop import run
from stage2_generators.server.steps.accept import Coroutine, connect, listen, serve
from stage2_generators.tasks import create_task

ANSWER = b"x" * 4 * 2**20  # More than the kernel's socket buffers hold.


class Writer:
    """Write to a socket through a buffer that the loop empties."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = bytearray()
        self.loop = get_running_loop()

    def write(self, data: bytes) -> None:
        if not self.buffer:
            with contextlib.suppress(BlockingIOError):  # Else it takes nothing now.
                data = data[self.sock.send(data) :]
            if not data:
                return
            self.loop.add_writer(self.sock.fileno(), self.on_writable)  # Bytes wait: watch.
        self.buffer += data

    def on_writable(self) -> None:
        del self.buffer[: self.sock.send(self.buffer)]
        if not self.buffer:
            self.loop.remove_writer(self.sock.fileno())  # Nothing waits: stop watching.


def watched(sock: socket.socket) -> bool:
    """Tell whether the loop watches ``sock`` for writable."""
    key = get_running_loop()._selector.get_map().get(sock.fileno())
    return key is not None and bool(key.events & selectors.EVENT_WRITE)


def main() -> Coroutine:
    writers = []

    def big_answer(conn: socket.socket) -> Coroutine:
        writers.append(Writer(conn))
        writers[0].write(ANSWER)  # Returns at once: no yield, no waiting.
        yield from get_running_loop().sock_recv(conn, 1)  # Until the client closes.
        conn.close()

    listener = listen()
    server = create_task(serve(listener, big_answer))
    with (yield from connect(listener.getsockname()[1])) as sock:
        loop = get_running_loop()
        received = len((yield from loop.sock_recv(sock, 1)))  # The answer has begun.
        writer = writers[0]
        print(f"kept in the buffer: {len(writer.buffer) > 0}, watched: {watched(writer.sock)}")
        while received < len(ANSWER):
            received += len((yield from loop.sock_recv(sock, 2**20)))
        print(f"client read {received:,} bytes")
        print(f"kept in the buffer: {len(writer.buffer) > 0}, watched: {watched(writer.sock)}")
    server.cancel()


if __name__ == "__main__":
    run(main())
