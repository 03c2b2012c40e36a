"""Step 3 of the server: back-pressure with ``drain``.

The buffered writer never makes a task wait, so a task can write faster
than its client reads and the buffer grows with every write.  ``drain``
is the brake: when the buffer holds more than a high-water mark, the task
waits on a future, and ``on_writable`` resolves it once the buffer is
back under a low-water mark.  A task that writes then drains can never be
more than one write ahead of its client: memory stays bounded, whatever
the client does.

The program streams 4 MB in 64 kB chunks to a client that reads slowly,
once without ``drain`` and once with it, and prints the biggest the
buffer ever was.

Still wrong: a client that never reads leaves its task waiting in
``drain`` forever, and one that never sends anything leaves its task
waiting to read forever.
"""

import socket
from collections.abc import Callable

from stage2_generators.events import get_running_loop
from stage2_generators.futures import Future
from stage2_generators.loop import run
from stage2_generators.server.steps import buffered
from stage2_generators.server.steps.accept import Coroutine, listen, serve
from stage2_generators.tasks import create_task, sleep

HIGH_WATER, LOW_WATER = 64 * 1024, 16 * 1024
CHUNK, CHUNKS = b"x" * 64 * 1024, 64


class Writer(buffered.Writer):
    """The buffered writer, plus a way to wait until its client catches up."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(sock)
        self.waiter: Future | None = None
        self.largest = 0  # The most bytes the buffer ever held, for the demonstration.

    def write(self, data: bytes) -> None:
        super().write(data)
        self.largest = max(self.largest, len(self.buffer))

    def on_writable(self) -> None:
        super().on_writable()
        if len(self.buffer) <= LOW_WATER and self.waiter and not self.waiter.done():
            self.waiter.set_result(None)  # The client caught up: the writer may go on.

    def drain(self) -> Coroutine:
        if len(self.buffer) > HIGH_WATER:
            self.waiter = self.loop.create_future()
            yield from self.waiter


def stream(use_drain: bool, writers: list[Writer]) -> Callable[[socket.socket], Coroutine]:
    """Return a handler that writes CHUNKS chunks, draining after each if told to."""

    def handler(conn: socket.socket) -> Coroutine:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 32 * 1024)  # Small kernel buffers
        writers.append(writer := Writer(conn))  # show what our own buffer does.
        for _ in range(CHUNKS):
            writer.write(CHUNK)
            if use_drain:
                yield from writer.drain()
        yield from get_running_loop().sock_recv(conn, 1)  # Until the client closes.
        conn.close()

    return handler


def slow_reader(port: int) -> Coroutine:
    """Read the whole stream, pausing after each piece."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 * 1024)
    sock.setblocking(False)
    yield from get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    with sock:
        received = 0
        while received < len(CHUNK) * CHUNKS:
            received += len((yield from get_running_loop().sock_recv(sock, 64 * 1024)))
            yield from sleep(0.001)


def main() -> Coroutine:
    for use_drain in (False, True):
        listener, writers = listen(), list[Writer]()
        server = create_task(serve(listener, stream(use_drain, writers)))
        yield from slow_reader(listener.getsockname()[1])
        server.cancel()
        largest = writers[0].largest
        print(f"{'with' if use_drain else 'without'} drain: the buffer held at most "
              f"{largest // 1024:,} kB; within the high-water mark plus one chunk: "
              f"{largest <= HIGH_WATER + len(CHUNK)}")  # fmt: skip


if __name__ == "__main__":
    run(main())
