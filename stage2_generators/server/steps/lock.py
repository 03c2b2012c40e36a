"""Step 5 of the server: a coroutine ``Lock`` around a shared resource.

Coroutines switch only where they ``yield``, so code between two yields
runs alone, and most shared state needs no lock.  But a job that reads a
shared value, waits (for a disk, a database, another server), then
writes the value back, has a yield point in the middle: another task can
read the same old value meanwhile, and one of the two updates is lost.
``count_visit`` does exactly that with a visitor counter.

The fix is stage 2's ``Lock``: ``acquire`` makes each task wait its turn
(on a future of its own, in a queue), so the read-wait-write runs for one
task at a time.  The program serves ten clients at once, without the lock
and then with it.  With ``--port N``, it serves (with the lock) until
Ctrl-C.

Still wrong: every step reads whatever bytes arrive, with no idea where a
request ends, and stops by dropping its connections.  The finished server
(``streams.py``, ``tcp.py``, ``http_server.py``) reads up to a separator
or a length, speaks HTTP/1.1, and closes its connections in order.
"""

import socket

from stage2_generators.events import get_running_loop
from stage2_generators.locks import Lock
from stage2_generators.server.steps import accept
from stage2_generators.server.steps.accept import Coroutine, Handler
from stage2_generators.server.steps.command import main_or_serve
from stage2_generators.tasks import create_task, gather, sleep

CLIENTS = 10


class Counter:
    """A count kept somewhere slow: reading and writing it both wait."""

    def __init__(self) -> None:
        self.value = 0

    def read(self) -> Coroutine:
        yield from sleep(0.001)  # Waiting for the disk: others run meanwhile.
        return self.value

    def write(self, value: int) -> Coroutine:
        yield from sleep(0.001)
        self.value = value


def count_visit(counter: Counter, lock: Lock | None) -> Coroutine:
    """Add one to the counter and return the new count."""
    if lock:
        yield from lock.acquire()
    try:
        value = yield from counter.read()  # Others may read the same value...
        yield from counter.write(value + 1)  # ...and this write undoes theirs.
        return value + 1
    finally:
        if lock:
            lock.release()


def welcome(counter: Counter, lock: Lock | None) -> Handler:
    """Return a handler that answers each request with the visitor's number."""

    def handler(conn: socket.socket) -> Coroutine:
        loop = get_running_loop()
        with conn:
            yield from loop.sock_recv(
                conn, 1024
            )  # The request, whatever it is.
            number = yield from count_visit(counter, lock)
            yield from loop.sock_sendall(conn, f"visitor {number}\n".encode())

    return handler


def visit(port: int) -> Coroutine:
    """Knock, and return what the server says."""
    with (yield from accept.connect(port)) as sock:
        yield from get_running_loop().sock_sendall(sock, b"hello")
        return (yield from get_running_loop().sock_recv(sock, 100)).decode()


def main() -> Coroutine:
    for lock in (None, Lock()):
        counter, listener = Counter(), accept.listen()
        server = create_task(accept.serve(listener, welcome(counter, lock)))
        port = listener.getsockname()[1]
        answers = yield from gather(*(visit(port) for _ in range(CLIENTS)))
        server.cancel()
        numbers = sorted({int(answer.split()[1]) for answer in answers})
        print(f"{'with' if lock else 'without'} a lock: {CLIENTS} visits, "
              f"counted {counter.value}; numbers given: {numbers}")  # fmt: skip


if __name__ == "__main__":
    main_or_serve(main, welcome(Counter(), Lock()), accept.serve)
