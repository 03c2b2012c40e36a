"""Step 4 of the server: hang up on silent clients, with a timer on the heap.

A task that waits to read from a client that never writes waits forever,
and keeps its socket and its memory.  ``wait_for`` puts a timer on the
loop's heap, the same heap as ``call_later`` and ``sleep``: if the read
is not done when the timer is due, the timer cancels the task where it
waits, and ``wait_for`` turns the cancellation into ``TimeoutError``.
If the read finishes first, the timer is cancelled instead.  The loop
never looks at the clock for each connection: it sleeps in ``select``
until the earliest timer is due, or a socket is ready.

The program serves two clients, one that talks and then goes quiet, and
one that never says a word; the server hangs up on both after ``IDLE``
seconds of silence.  With ``--port N``, it serves until Ctrl-C.

Still wrong: nothing is shared between the tasks yet.  A job that reads
a shared value, waits, and writes it back loses updates when tasks run
it at once (the next step, ``lock``, shows how and mends it).
"""

import socket

from stage2_generators.events import get_running_loop
from stage2_generators.server.steps import accept
from stage2_generators.server.steps.accept import Coroutine
from stage2_generators.server.steps.command import main_or_serve
from stage2_generators.tasks import create_task, gather, wait_for

IDLE = 0.2  # Seconds of silence before the server hangs up.


def shout_or_hang_up(conn: socket.socket) -> Coroutine:
    """Answer in capitals; hang up after IDLE seconds without a word."""
    loop = get_running_loop()
    with conn:
        while True:
            try:
                data = yield from wait_for(loop.sock_recv(conn, 1024), IDLE)
            except TimeoutError:
                print(f"server: {IDLE} s without a word, hanging up")
                return
            if not data:
                return
            yield from loop.sock_sendall(conn, data.upper())


def client(port: int, words: str) -> Coroutine:
    """Say ``words`` (if any), then wait, silent, until the server hangs up."""
    loop = get_running_loop()
    with (yield from accept.connect(port)) as sock:
        if words:
            yield from loop.sock_sendall(sock, words.encode())
            answer = yield from loop.sock_recv(sock, 1024)
            print(f"client: got {answer.decode()!r}")
        if (yield from loop.sock_recv(sock, 1024)) == b"":
            who = "after talking" if words else "that never talked"
            print(f"client {who}: the server hung up")


def main() -> Coroutine:
    listener = accept.listen()
    server = create_task(accept.serve(listener, shout_or_hang_up))
    port = listener.getsockname()[1]
    yield from gather(client(port, "hello"), client(port, ""))
    server.cancel()


if __name__ == "__main__":
    main_or_serve(main, shout_or_hang_up, accept.serve)
