"""Step 2 of stage 2: ``yield from``, for futures and sub-coroutines alike.

``Future.__iter__`` yields the future itself, then returns its result: a
coroutine waits for a future with ``yield from future`` just as it calls
a sub-coroutine with ``yield from read(...)``.  Futures travel up through
every caller to the Task, results travel back down.  So waiting for a
socket is one coroutine, ``wait_ready``; ``read`` and ``read_all`` build
on it, and ``fetch`` reads like the blocking fetch of the first step.

Still wrong: the fetches are a fixed list, all started at once (ten URLs,
ten sockets open together).  The next step, ``queues``, adds a queue and
a pool of workers.
"""

import selectors
import socket
from collections.abc import Generator
from typing import Any

from shared.steps import (
    Progress,
    http_request,
    some_pages,
    status_line,
    url_from_argv,
)
from stage1_callbacks.steps.callback import loop
from stage1_callbacks.steps.nonblocking import start_connecting
from stage2_generators.steps import future

Coroutine = Generator["Future", Any, Any]


# --8<-- [start:yield-from]
class Future(future.Future):
    """A Future that a coroutine can wait for with ``yield from``."""

    def __iter__(self) -> Coroutine:
        yield self  # Up to the Task, which resumes us once it is done.
        return self.result()


def wait_ready(
    selector: selectors.BaseSelector, sock: socket.socket, event: int
) -> Coroutine:
    """Wait until ``sock`` is ready for ``event`` (readable or writable)."""
    f = Future()
    selector.register(sock, event, f.set_result)
    yield from f
    selector.unregister(sock)


def read(selector: selectors.BaseSelector, sock: socket.socket) -> Coroutine:
    """Return the next chunk of bytes from ``sock``, b"" at the end."""
    yield from wait_ready(selector, sock, selectors.EVENT_READ)
    return sock.recv(4096)


def read_all(
    selector: selectors.BaseSelector, sock: socket.socket
) -> Coroutine:
    """Return every byte ``sock`` receives until the server closes it."""
    response = []
    chunk = yield from read(selector, sock)
    while chunk:
        response.append(chunk)
        chunk = yield from read(selector, sock)
    return b"".join(response)


def fetch(url: str, selector: selectors.BaseSelector) -> Coroutine:
    """Return the response to a GET of ``url``."""
    sock = start_connecting(url)
    yield from wait_ready(selector, sock, selectors.EVENT_WRITE)
    sock.send(http_request(url))
    response = yield from read_all(selector, sock)
    sock.close()
    return response
    # --8<-- [end:yield-from]


def fetch_and_print(
    url: str, selector: selectors.BaseSelector, progress: Progress
) -> Coroutine:
    """Fetch ``url`` and print its status line."""
    progress.begin(url)
    response = yield from fetch(url, selector)
    progress.end(url, status_line(response))


if __name__ == "__main__":
    progress = Progress()
    selector = selectors.DefaultSelector()
    urls = some_pages(url_from_argv())
    for url in urls:
        future.Task(fetch_and_print(url, selector, progress))
    loop(selector, progress.in_flight)  # Until no fetch is in flight.
    seconds = progress.seconds()
    print(f"{len(urls)} pages in {seconds:.3f} s, {len(urls)} coroutines")
