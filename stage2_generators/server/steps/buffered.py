"""Step 2 of the server: buffered writes, watched for writable only when needed.

``sock_sendall`` makes the task wait until the client has taken every
byte.  A server would rather hand its answer over and go on.  ``Writer``
sends what the socket takes at once and keeps the rest in a buffer; only
while the buffer holds bytes does it ask the loop to call ``on_writable``
when the socket can take more (``add_writer``), and it stops the watch as
soon as the buffer is empty (``remove_writer``).  A socket that is
watched for writable while there is nothing to write would wake the loop
on every turn: a busy loop again.

The program asks for a 4 MB answer and reads it; the server says what its
writer holds before and after.  With ``--port N``, it serves until Ctrl-C.

Still wrong: nothing stops a task from writing faster than its client
reads, so the buffer can grow without limit.
"""

import contextlib
import selectors
import socket

from stage2_generators.events import get_running_loop
from stage2_generators.server.steps import accept
from stage2_generators.server.steps.accept import Coroutine
from stage2_generators.server.steps.command import main_or_serve
from stage2_generators.tasks import create_task

ANSWER = (b"x" * 63 + b"\n") * 2**16  # 4 MB: more than the kernel holds.


class Writer:
    """Write to a socket through a buffer that the loop empties."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = bytearray()
        self.loop = get_running_loop()

    def write(self, data: bytes) -> None:
        if not self.buffer:
            with contextlib.suppress(BlockingIOError):  # The socket is full.
                data = data[self.sock.send(data) :]
            if not data:
                return
            # Bytes wait in the buffer: ask to be told when the socket has room.
            self.loop.add_writer(self.sock.fileno(), self.on_writable)
        self.buffer += data

    def on_writable(self) -> None:
        try:
            del self.buffer[: self.sock.send(self.buffer)]
        except ConnectionError:  # The client has gone: nobody reads the rest.
            self.buffer.clear()
        if not self.buffer:  # Nothing waits: stop watching.
            self.loop.remove_writer(self.sock.fileno())


def big_answer(conn: socket.socket) -> Coroutine:
    """Answer any request with ANSWER; hang up once the client is done."""
    loop = get_running_loop()
    yield from loop.sock_recv(conn, 1024)  # The request, whatever it says.
    writer = Writer(conn)
    writer.write(ANSWER)  # Returns at once: no yield, no waiting.
    print(f"server: answer written; {state(writer)}")
    yield from loop.sock_recv(conn, 1024)  # Until the client speaks or leaves.
    print(f"server: the client is done; {state(writer)}")
    conn.close()


def state(writer: Writer) -> str:
    """Say whether ``writer`` holds bytes, and whether the loop watches it."""
    key = writer.loop._selector.get_map().get(writer.sock.fileno())
    watched = key is not None and bool(key.events & selectors.EVENT_WRITE)
    return f"kept in the buffer: {bool(writer.buffer)}, watched: {watched}"


def main() -> Coroutine:
    listener = accept.listen()
    server = create_task(accept.serve(listener, big_answer))
    loop = get_running_loop()
    with (yield from accept.connect(listener.getsockname()[1])) as sock:
        yield from loop.sock_sendall(sock, b"a big answer, please")
        received = 0
        while received < len(ANSWER):
            received += len((yield from loop.sock_recv(sock, 2**20)))
        print(f"client: read {received:,} bytes")
        yield from loop.sock_sendall(sock, b"thanks")
        yield from loop.sock_recv(sock, 1)  # Until the server hangs up.
    server.cancel()


if __name__ == "__main__":
    main_or_serve(main, big_answer, accept.serve)
