"""Exercise: a Fetcher that gives up.

A Fetcher on the finished stage's event loop (``stage1_callbacks.loop``),
which has timers: ``loop.call_later(delay, callback)`` runs ``callback``
after ``delay`` seconds and returns a handle whose ``cancel()`` stops it.
Today a server that never answers keeps the Fetcher waiting forever.
Make it give up after ``timeout`` seconds: stop watching the socket,
close it, and call ``on_done`` with a ``TimeoutError``.  A fetch that
ends in time must leave no timer behind.
"""

from collections.abc import Callable

from shared.steps import http_request
from stage1_callbacks.loop import EVENT_READ, EVENT_WRITE, EventLoop
from stage1_callbacks.steps.nonblocking import (
    check_connection,
    start_connecting,
)

Outcome = bytes | TimeoutError  # The whole response, or why there is none.


class Fetcher:
    """Fetch one URL in callbacks; call ``on_done`` once, with the outcome."""

    def __init__(
        self,
        loop: EventLoop,
        url: str,
        timeout: float,
        on_done: Callable[[Outcome], None],
    ) -> None:
        self.loop = loop
        self.url = url
        self.timeout = timeout
        self.on_done = on_done
        self.response = b""

    def fetch(self) -> None:
        """Start connecting, and return at once."""
        self.sock = start_connecting(self.url)
        self.loop.register(self.sock, EVENT_WRITE, self.connected)

    def connected(self) -> None:
        """Send the request, then wait for the answer."""
        self.loop.unregister(self.sock)
        check_connection(self.sock)
        self.sock.send(http_request(self.url))
        self.loop.register(self.sock, EVENT_READ, self.read_response)

    def read_response(self) -> None:
        """Take the next chunk of the answer; at its end, hand it over."""
        chunk = self.sock.recv(4096)
        if chunk:
            self.response += chunk
            return
        self.loop.unregister(self.sock)
        self.sock.close()
        self.on_done(self.response)
