"""Step 3 of the server: back-pressure with ``drain``.

The buffered writer never makes a task wait, so a task can write faster
than its client reads, and the buffer grows.  ``drain`` is the brake:
when the buffer holds more than a high-water mark, the task waits on a
future, which ``on_writable`` resolves once the buffer is back under a
low-water mark.  A task that writes, then drains, stays within one write
of its client.  The program streams 4 MB to a slow reader, without
``drain`` and with it; with ``--port N``, it serves until Ctrl-C.

Still wrong: a client that never reads leaves its task waiting in
``drain`` forever, and one that never sends anything leaves its task
waiting to read forever.
"""

import socket

from stage2_generators.events import get_running_loop
from stage2_generators.futures import Future
from stage2_generators.server.steps import accept, buffered
from stage2_generators.server.steps.accept import Coroutine, Handler
from stage2_generators.server.steps.command import main_or_serve
from stage2_generators.tasks import create_task, sleep

HIGH_WATER, LOW_WATER = 64 * 1024, 16 * 1024
CHUNK, CHUNKS = (b"x" * 63 + b"\n") * 1024, 64  # 64 kB at a time, 4 MB.
KERNEL_BUFFER = 32 * 1024  # Small socket buffers show what our own does.


class Writer(buffered.Writer):
    """The buffered writer, and a way to wait until its client catches up."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(sock)
        self.waiter: Future | None = None
        self.largest = 0  # The most bytes the buffer ever held, to show.

    def write(self, data: bytes) -> None:
        super().write(data)
        self.largest = max(self.largest, len(self.buffer))

    def on_writable(self) -> None:
        super().on_writable()
        waiter = self.waiter
        if len(self.buffer) <= LOW_WATER and waiter and not waiter.done():
            waiter.set_result(None)  # The client caught up: go on writing.

    def drain(self) -> Coroutine:
        if len(self.buffer) > HIGH_WATER:
            self.waiter = self.loop.create_future()
            yield from self.waiter


def stream(use_drain: bool) -> Handler:
    """Return a handler that writes CHUNKS chunks, draining if told to."""

    def handler(conn: socket.socket) -> Coroutine:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, KERNEL_BUFFER)
        loop, writer = get_running_loop(), Writer(conn)
        yield from loop.sock_recv(conn, 1024)  # The request, whatever it says.
        for _ in range(CHUNKS):
            writer.write(CHUNK)
            if use_drain:
                yield from writer.drain()
        yield from loop.sock_recv(conn, 1024)  # Until the client is done.
        kb, limit = writer.largest // 1024, (HIGH_WATER + len(CHUNK)) // 1024
        print(f"{'with' if use_drain else 'without'} drain: at most {kb:,} kB "
              f"in the buffer; the mark plus a write: {limit} kB")  # fmt: skip
        conn.close()

    return handler


def slow_reader(port: int) -> Coroutine:
    """Ask for the stream and read it all, pausing after each piece."""
    loop = get_running_loop()
    with (yield from accept.connect(port)) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, KERNEL_BUFFER)
        yield from loop.sock_sendall(sock, b"stream, please")
        received = 0
        while received < len(CHUNK) * CHUNKS:
            received += len((yield from loop.sock_recv(sock, 64 * 1024)))
            yield from sleep(0.001)  # A slow reader: not a wait for an event.
        yield from loop.sock_sendall(sock, b"thanks")
        yield from loop.sock_recv(sock, 1)  # Until the server hangs up.


def main() -> Coroutine:
    for use_drain in (False, True):
        listener = accept.listen()
        server = create_task(accept.serve(listener, stream(use_drain)))
        yield from slow_reader(listener.getsockname()[1])
        server.cancel()


if __name__ == "__main__":
    main_or_serve(main, stream(use_drain=True), accept.serve)
