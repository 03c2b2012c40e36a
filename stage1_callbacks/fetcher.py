"""Stage 1's Fetcher: one HTTP request over one non-blocking socket, in callbacks.

A blocking fetch is one function: connect, send, receive until the end,
return the response.  Without threads, no step may wait, so the function is
cut into callbacks at each point where it would block (connect, send, recv):
each step asks the loop to call the next one when the socket is ready, and
returns.  What the blocking function kept in local variables (the socket,
the bytes sent so far, the response read so far) now lives on the Fetcher,
because every callback starts with an empty stack.  The end of the request,
success or failure, is reported exactly once, to one callback.

Left out compared with asyncio and aiohttp: name lookups in a thread (here
they block, see ``shared.web.resolver``), connecting to several addresses at once
("happy eyeballs": here they are tried one after another), keep-alive and
connection pools, proxies, and reading a body into a stream instead of
memory.  https lives in ``stage1_callbacks.tls``: the same chain with a
TLS handshake, kept out of this file so the lesson reads on its own.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator, Mapping

from shared.record.trace import NO_TRACE, Trace
from shared.web.http import USER_AGENT, Response, ResponseParser, build_request, request_target
from shared.web.resolver import Address, Resolver
from stage1_callbacks.loop import EVENT_READ, EVENT_WRITE, EventLoop, Handle

RECV_SIZE = 64 * 1024  # Bytes asked of each recv(); bigger than any TLS record.


# --8<-- [start:fetcher]
class Fetcher:
    """Fetch one URL over one non-blocking socket, then call ``callback(self)``.

    After the callback, exactly one of ``response`` (a shared.web.http.Response)
    and ``exception`` is set.  Network failures arrive as OSError (refused,
    reset, TimeoutError after ``timeout`` seconds for the whole request,
    socket.gaierror for a name that does not resolve) or BadResponse.
    """

    # Everything a blocking fetch keeps in local variables, kept here instead.
    __slots__ = (
        "url", "loop", "callback", "timeout", "resolver", "user_agent", "host", "request", "sent",
        "addresses", "sock", "parser", "timer", "done", "response", "exception", "trace",
        "headers", "make_socket",
    )  # fmt: skip

    def __init__(
        self,
        url: str,
        loop: EventLoop,
        callback: Callable[[Fetcher], object],
        *,
        timeout: float,
        max_size: int,
        resolver: Resolver,
        user_agent: str = USER_AGENT,
        trace: Trace = NO_TRACE,
        headers: Mapping[str, str] | None = None,
        make_socket: Callable[..., socket.socket] = socket.socket,
    ) -> None:
        self.url = url
        self.loop = loop
        self.callback = callback  # Called once, with this Fetcher, at the end.
        self.timeout = timeout
        self.resolver = resolver
        self.user_agent = user_agent
        self.headers = headers  # More request headers: a recrawl's conditional ones.
        self.host = ""
        self.request = memoryview(b"")  # The request's bytes; sliced without copying.
        self.sent = 0  # How many of them the socket has taken.
        self.addresses: Iterator[Address] = iter(())  # Addresses not tried yet.
        self.sock: socket.socket | None = None  # Registered with the loop while set.
        self.parser = ResponseParser(max_size)  # Holds the answer read so far.
        self.timer: Handle | None = None  # The timeout for the whole request.
        self.done = False
        self.response: Response | None = None
        self.exception: Exception | None = None
        self.trace = trace  # Notes the phases of the request (shared/record/trace.py).
        self.make_socket = make_socket  # socket.socket, or a simulated network's.

    def __repr__(self) -> str:
        return f"<Fetcher {self.url} {'done' if self.done else 'running'}>"

    # --8<-- [end:fetcher]

    # --8<-- [start:start]
    def start(self) -> None:
        """Start the timeout, look the host up and start connecting; return at once."""
        self.timer = self.loop.call_later(self.timeout, self.on_timeout)
        self.trace.begin(self.url)
        try:
            self.host, port, _ = request_target(self.url)
            self.addresses = iter(self.resolver.resolve(self.host, port))  # Blocks!
            self.request = memoryview(build_request(self.url, self.user_agent, self.headers))
        except Exception as error:  # A name that does not resolve, a bad URL.
            self.finish(error)
            return
        self.connect(None)

    # --8<-- [end:start]

    # --8<-- [start:connect]
    def connect(self, error: Exception | None) -> None:
        """Start connecting to the next address; if none is left, finish with ``error``."""
        for family, proto, address in self.addresses:  # Resumes after the last one tried.
            sock = None
            try:
                sock = self.make_socket(family, socket.SOCK_STREAM, proto)
                sock.setblocking(False)
                sock.connect(address)
            except BlockingIOError:
                pass  # EINPROGRESS: the connection is under way.
            except OSError as connect_error:  # Refused at once, out of descriptors...
                if sock is not None:
                    sock.close()
                error = connect_error
                continue
            assert sock is not None  # Only connect() gets this far: the socket exists.
            self.sock = sock
            # --8<-- [start:at_once]
            # On the same machine the connection is made already: wait to read,
            # and send now, not a turn later (every request of a crawl of the
            # benchmark's site went out at once).  Registered for reading from
            # the start, the socket needs no change once the request is sent.
            if self.is_connected():
                self.loop.register(sock, EVENT_READ, self.on_readable)
                self.connected()
                return
            # Else it turns writable once the connection is made, or failed.
            self.loop.register(sock, EVENT_WRITE, self.on_connected)
            return
        self.finish(error or OSError(f"no address to connect to for {self.url}"))

    def is_connected(self) -> bool:
        """Tell whether the connection is made already, without waiting.

        ``getpeername()`` names the other end once the connection is made,
        and raises OSError (ENOTCONN) while it is under way, or after it
        failed: SO_ERROR keeps the reason for ``on_connected`` then.
        """
        assert self.sock is not None
        try:
            self.sock.getpeername()
        except OSError:
            return False
        return True

    # --8<-- [end:at_once]

    def on_connected(self) -> None:
        """Check how the connect ended; send the request or try the next address."""
        assert self.sock is not None
        try:
            code = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if code == 0:
                self.connected()
                return
        except Exception as error:
            self.finish(error)
            return
        self.close_socket()
        self.connect(OSError(code, os.strerror(code)))  # OSError picks the subclass.

    def connected(self) -> None:
        """Begin sending the request; the socket is writable already."""
        self.trace.phase(self.url, "send")
        self.on_writable()

    # --8<-- [end:connect]

    # --8<-- [start:on_writable]
    def on_writable(self) -> None:
        """Send what is left of the request."""
        assert self.sock is not None
        try:
            self.sent += self.sock.send(self.request[self.sent :])
        except BlockingIOError:
            pass  # The send buffer is full after all.
        except Exception as error:  # Reset by the server, or a bug.
            self.finish(error)
            return
        self.after_send()

    def after_send(self) -> None:
        """Wait to send the rest of the request or, once it is all sent, to read."""
        assert self.sock is not None
        if self.sent < len(self.request):
            # A partial send: wait until the rest fits.
            self.loop.modify(self.sock, EVENT_WRITE, self.on_writable)
        else:
            self.trace.phase(self.url, "wait")
            # Nothing changes if it was registered so by connect(): the loop skips it.
            self.loop.modify(self.sock, EVENT_READ, self.on_readable)

    # --8<-- [end:on_writable]

    # --8<-- [start:on_readable]
    def on_readable(self) -> None:
        """Read the next piece of the response."""
        assert self.sock is not None
        try:
            data = self.sock.recv(RECV_SIZE)
        except BlockingIOError:
            return  # Nothing to read after all; wait again.
        except Exception as error:  # Reset by the server, or a bug.
            self.finish(error)
            return
        self.received(data)

    def received(self, data: bytes) -> None:
        """Feed ``data`` (empty at the end of the connection) to the parser."""
        self.trace.phase(self.url, "read")
        try:
            if data:
                self.parser.feed_data(data)  # Stops at max_size; see the parser.
            else:
                self.parser.feed_eof()  # Raises BadResponse if the response is cut short.
            if self.parser.done:
                self.finish(self.parser.response())
        except Exception as error:  # BadResponse, or a bug.
            self.finish(error)

    # --8<-- [end:on_readable]

    # --8<-- [start:finish]
    def on_timeout(self) -> None:
        """Give up: the request took longer than ``timeout`` seconds in all."""
        message = f"no complete response within {self.timeout} seconds"
        self.finish(TimeoutError(message))

    def finish(self, result: Response | Exception) -> None:
        """Close up, then report ``result`` to the callback on the loop's next turn.

        The callback is scheduled, never called from here: ``finish`` may run
        inside ``start()``, and a callback that ran there would run inside its
        caller, with that caller's state half updated.  (asyncio's futures
        schedule their callbacks for the same reason.)
        """
        if self.done:
            return  # Reported already: never call back twice.
        self.close()
        self.trace.end(self.url)
        if isinstance(result, Response):
            self.response = result
        else:
            self.exception = result
        self.loop.call_soon(self.callback, self)

    def close(self) -> None:
        """Cancel the timeout and close the socket, without calling back."""
        self.done = True
        if self.timer is not None:
            self.timer.cancel()
        self.close_socket()

    def close_socket(self) -> None:
        """Unregister the socket from the loop and close it, if there is one."""
        if self.sock is not None:
            # A try costs nothing unless it raises; asking the selector first
            # would cost five calls for every request.
            try:  # noqa: SIM105 (suppress() costs three calls more)
                self.loop.unregister(self.sock)
            except KeyError:
                pass  # Not registered yet: Ctrl-C came just before.
            self.sock.close()
            self.sock = None

    # --8<-- [end:finish]
