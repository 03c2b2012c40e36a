"""A solution: a timer set in ``fetch``, cancelled at the end.

Whichever comes first wins: the end of the response cancels the timer,
or the timer gives up on the socket.  Both paths stop watching the socket
and close it, and each calls ``on_done`` exactly once.
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
        """Start connecting and the timer, and return at once."""
        self.sock = start_connecting(self.url)
        self.loop.register(self.sock, EVENT_WRITE, self.connected)
        self.timer = self.loop.call_later(self.timeout, self.give_up)

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
        self.timer.cancel()  # In time: the timer must not fire later.
        self.close()
        self.on_done(self.response)

    def give_up(self) -> None:
        """The time is up: drop the socket, and say so."""
        self.close()
        self.on_done(TimeoutError(f"no answer in {self.timeout} s"))

    def close(self) -> None:
        """Stop watching the socket and close it."""
        self.loop.unregister(self.sock)
        self.sock.close()
