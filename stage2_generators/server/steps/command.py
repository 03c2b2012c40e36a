"""The server steps' command line: run a step's demonstration, or serve.

Not a step, and not the lesson: each step ends with ``main_or_serve(main,
handler, serve)``.  Run as it is, a step runs its demonstration, ``main``,
and says how long it took.  With ``--port N`` it listens on port N of
127.0.0.1 and runs ``serve(listener, handler)`` until Ctrl-C, for a
reader to talk to with ``curl`` or ``nc``; port 0 means any free port,
and the first line says which.  (Each step passes its own ``serve``, so
this file imports no step.)

Ctrl-C must not raise KeyboardInterrupt in whatever task happens to run:
that task would end with an error that nobody retrieves.  So the signal
only writes a byte to a socket that the loop watches (``set_wakeup_fd``,
the "self-pipe"), ``serve_until_ctrl_c`` wakes up and returns, and
``run`` cancels every task left, each of which closes its connection.
"""

import argparse
import signal
import socket
import time
from collections.abc import Callable, Generator
from typing import Any

from stage2_generators.events import get_running_loop
from stage2_generators.loop import run
from stage2_generators.tasks import create_task

Coroutine = Generator[Any, Any, Any]  # A generator coroutine, to mypy.
Handler = Callable[[socket.socket], Coroutine]  # Serves one connection.
Serve = Callable[
    [socket.socket, Handler], Coroutine
]  # Serves a listener's connections.


def main_or_serve(
    main: Callable[[], Coroutine], handler: Handler, serve: Serve
) -> None:
    """Run ``main`` and time it; with --port N, serve ``handler`` instead."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, help="serve until Ctrl-C (0: any)")
    port = parser.parse_args().port
    if port is None:
        start = time.perf_counter()
        run(main())
        print(f"done in {time.perf_counter() - start:.3f} s")
        return
    try:
        listener = socket.create_server(("127.0.0.1", port))
    except (OSError, OverflowError) as error:
        parser.error(f"cannot listen on port {port}: {error}")
    listener.setblocking(False)
    print(f"serving on 127.0.0.1:{listener.getsockname()[1]}", flush=True)
    run(serve_until_ctrl_c(listener, handler, serve))
    print("stopped")


def serve_until_ctrl_c(
    listener: socket.socket, handler: Handler, serve: Serve
) -> Coroutine:
    """Serve ``handler`` on ``listener`` until Ctrl-C wakes this coroutine."""
    wake_here, wake_there = socket.socketpair()
    for sock in (wake_here, wake_there):
        sock.setblocking(False)
    old_wakeup = signal.set_wakeup_fd(wake_there.fileno())
    old_handler = signal.signal(signal.SIGINT, lambda signum, frame: None)
    server = create_task(serve(listener, handler))
    try:
        yield from get_running_loop().sock_recv(wake_here, 1)  # Until Ctrl-C.
    finally:
        server.cancel()
        signal.signal(signal.SIGINT, old_handler)
        signal.set_wakeup_fd(old_wakeup)
        wake_here.close()
        wake_there.close()
