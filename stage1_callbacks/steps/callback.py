"""Step 4: ``selectors``, and a callback to run when a socket is ready.

Instead of asking the socket, the program tells a selector what it waits
for (``register``: this socket, writable, then run ``connected``) and
``select()`` sleeps until the operating system reports a ready socket.
The loop at the bottom runs the callback registered for it.  That loop is
an event loop.  A connecting socket turns writable when the attempt is
over, either way: ``connected`` first asks SO_ERROR whether it failed.

Still wrong: the fetch is cut into callbacks, and what they share (the
socket, the chunks read so far) hangs on closures; there is one fetch,
and nothing says what to do with the response.  The next step,
``fetcher``, keeps that state on an object and runs many fetches at once.
"""

import selectors
import time

from shared.steps import http_request, status_line, url_from_argv
from stage1_callbacks.steps.nonblocking import (
    check_connection,
    start_connecting,
)


def fetch(url: str, selector: selectors.BaseSelector, todo: set[str]) -> None:
    """Start fetching ``url``; at the end, print it and drop it from todo."""
    sock = start_connecting(url)
    chunks = []

    def connected() -> None:
        selector.unregister(sock)
        check_connection(sock)
        sock.send(http_request(url))
        selector.register(sock, selectors.EVENT_READ, read_response)

    def read_response() -> None:
        chunk = sock.recv(4096)  # Ready: this does not wait.
        if chunk:
            chunks.append(chunk)
            return
        selector.unregister(sock)
        sock.close()
        print(f"{status_line(b''.join(chunks))} {url}")
        todo.remove(url)

    selector.register(sock, selectors.EVENT_WRITE, connected)


def loop(selector: selectors.BaseSelector, todo: set[str]) -> int:
    """Run the callbacks of ready sockets until todo is empty.

    Return how many times the loop woke up.
    """
    wakeups = 0
    while todo:
        for key, _mask in selector.select():  # Sleeps until a socket is ready.
            callback = key.data
            callback()
        wakeups += 1
    return wakeups


if __name__ == "__main__":
    start, cpu = time.perf_counter(), time.process_time()
    url = url_from_argv()
    selector = selectors.DefaultSelector()
    todo = {url}
    fetch(url, selector, todo)
    wakeups = loop(selector, todo)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"1 page in {seconds:.3f} s, {cpu:.3f} s of it busy on the CPU")
    print(f"the loop woke up {wakeups} times")
