"""Step 1 of stage 2: a Future, a generator that yields it, and a Task.

A ``Future`` is a result not there yet; ``set_result`` runs its callbacks.
``fetch`` is one generator again: where it would block, it yields a future
that a selector callback resolves.  A ``Task`` sends each result in and
waits for the next future.  Stage 1's loop runs it all unchanged.

Still wrong: each wait on the socket is written out by hand, and ``fetch``
cannot call a helper that waits.  Next, ``yield_from`` fixes both.
"""

import selectors
from collections.abc import Callable, Generator
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


# --8<-- [start:future]
class Future:
    """A result that is not there yet, and the callbacks that wait for it."""

    def __init__(self) -> None:
        self._result: object = None
        self._callbacks: list[Callable[[Future], object]] = []

    def add_done_callback(self, fn: Callable[["Future"], object]) -> None:
        self._callbacks.append(fn)

    def set_result(self, result: object = None) -> None:
        self._result = result
        for fn in self._callbacks:  # Run at once, as the chapter does.
            fn(self)

    def result(self) -> object:
        return self._result


class Task:
    """Drive a generator: send each result in, wait for the next future."""

    def __init__(self, coro: Generator[Future, Any, Any]) -> None:
        self.coro = coro
        start = Future()
        start.set_result(None)
        self.step(start)  # Runs the generator up to its first yield.

    def step(self, future: Future) -> None:
        try:
            next_future = self.coro.send(future.result())
        except StopIteration:
            return  # The generator returned: the task is done.
        next_future.add_done_callback(self.step)
        # --8<-- [end:future]


# --8<-- [start:fetch]
def fetch(
    url: str, selector: selectors.BaseSelector, progress: Progress
) -> Generator[Future, Any, None]:
    """Fetch ``url``, yielding a future wherever it waits."""
    progress.begin(url)
    sock = start_connecting(url)
    f = Future()
    selector.register(sock, selectors.EVENT_WRITE, f.set_result)
    yield f  # Paused here until the socket is writable: connected.
    selector.unregister(sock)
    sock.send(http_request(url))
    response = b""
    while True:
        f = Future()
        selector.register(sock, selectors.EVENT_READ, f.set_result)
        yield f  # Paused until the socket is readable.
        selector.unregister(sock)
        chunk = sock.recv(4096)
        if not chunk:
            break
        response += chunk
    sock.close()
    progress.end(url, status_line(response))
    # --8<-- [end:fetch]


if __name__ == "__main__":
    progress = Progress()
    selector = selectors.DefaultSelector()
    urls = some_pages(url_from_argv())
    for url in urls:
        Task(fetch(url, selector, progress))
    loop(selector, progress.in_flight)  # Until no fetch is in flight.
    seconds = progress.seconds()
    print(f"{len(urls)} pages in {seconds:.3f} s, {len(urls)} coroutines")
