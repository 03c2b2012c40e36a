"""Step 5: a ``Fetcher`` per URL, and a loop that stops when the last one ends.

The callbacks of step 4 become the methods of a class, as in the 500 Lines
chapter: ``fetch`` starts connecting, ``connected`` sends the request,
``read_response`` collects the answer.  What they share (the socket, the
response so far) lives on the Fetcher, because a callback starts with an
empty stack.  Ten Fetchers run at once in one thread; the loop runs until
``todo``, the URLs not done yet, is empty.

Still wrong: the URLs are a fixed list, and nothing is done with the
pages.  The next step, ``crawl``, reads the links of each page and fetches
the new ones.
"""

import selectors
import socket
import time

from shared.steps import http_request, some_pages, status_line, url_from_argv
from stage1_callbacks.steps.callback import loop
from stage1_callbacks.steps.nonblocking import (
    check_connection,
    start_connecting,
)


class Fetcher:
    """Fetch one URL over a non-blocking socket, in callbacks."""

    def __init__(
        self, url: str, selector: selectors.BaseSelector, todo: set[str]
    ) -> None:
        self.url = url
        self.selector = selector
        self.todo = todo  # The URLs not done yet; this one leaves at its end.
        self.sock: socket.socket  # Made by fetch().
        self.response = b""  # What the server sent so far.

    def fetch(self) -> None:
        """Start connecting, and return at once."""
        self.sock = start_connecting(self.url)
        self.selector.register(self.sock, selectors.EVENT_WRITE, self.connected)

    def connected(self) -> None:
        """Send the request, then wait for the answer."""
        self.selector.unregister(self.sock)
        check_connection(self.sock)
        self.sock.send(http_request(self.url))
        self.selector.register(
            self.sock, selectors.EVENT_READ, self.read_response
        )

    def read_response(self) -> None:
        """Take the next chunk of the answer; at its end, finish."""
        chunk = self.sock.recv(4096)
        if chunk:
            self.response += chunk
            return
        self.selector.unregister(self.sock)
        self.sock.close()
        self.finish()

    def finish(self) -> None:
        """Print the status line and mark this URL done."""
        print(f"{status_line(self.response)} {self.url}")
        self.todo.remove(self.url)


if __name__ == "__main__":
    start = time.perf_counter()
    urls = some_pages(url_from_argv())
    selector = selectors.DefaultSelector()
    todo = set(urls)
    for url in urls:
        Fetcher(url, selector, todo).fetch()
    wakeups = loop(selector, todo)
    seconds = time.perf_counter() - start
    print(f"{len(urls)} pages in {seconds:.3f} s, one thread")
    print(f"the loop woke up {wakeups} times")
