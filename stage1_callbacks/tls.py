"""https for stage 1: the Fetcher's chain of callbacks with a TLS handshake.

Not the lesson of the stage, so it lives apart from ``fetcher.py``: the
plain Fetcher shows how a request is cut into callbacks, and this subclass
shows that TLS fits the same shape.  The standard ``ssl`` module works on
non-blocking sockets: the handshake, ``send`` and ``recv`` raise
SSLWantReadError or SSLWantWriteError instead of blocking, and the Fetcher
waits for what the error names.  asyncio speaks TLS in its transports
instead (``ssl=`` on ``create_connection``); aiohttp uses that.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from typing import Any

from stage1_callbacks.fetcher import RECV_SIZE, Fetcher
from stage1_callbacks.loop import EVENT_READ, EVENT_WRITE, EventLoop


# --8<-- [start:https]
class HttpsFetcher(Fetcher):
    """A Fetcher for https URLs: a TLS handshake after connecting, then the same steps.

    The socket is wrapped with ``do_handshake_on_connect=False``, so the
    handshake, ``send`` and ``recv`` never block: they raise
    SSLWantReadError or SSLWantWriteError instead, because TLS sometimes
    has to read before it can write and the other way round.  Each step then
    waits for what the error names and runs again.  A certificate that does
    not verify fails the fetch with ssl.SSLCertVerificationError.
    """

    __slots__ = ("ssl_context",)

    def __init__(
        self,
        url: str,
        loop: EventLoop,
        callback: Callable[[Fetcher], object],
        *,
        ssl_context: ssl.SSLContext,
        **options: Any,
    ) -> None:
        super().__init__(url, loop, callback, **options)
        self.ssl_context = ssl_context

    def connected(self) -> None:
        """Wrap the connected socket in TLS and begin the handshake."""
        plain, self.sock = self.sock, None
        assert plain is not None
        self.loop.unregister(plain)  # The TLS socket takes its file descriptor over.
        try:
            self.sock = self.ssl_context.wrap_socket(
                plain, server_hostname=self.host, do_handshake_on_connect=False
            )
        except Exception as error:
            self.finish(error)
            return
        finally:
            plain.close()  # Detached by wrap_socket when it succeeded: closes nothing then.
        self.loop.register(self.sock, EVENT_WRITE, self.on_handshake)
        self.on_handshake()

    def on_handshake(self) -> None:
        """Take the handshake one step further; once it is done, send the request."""
        assert isinstance(self.sock, ssl.SSLSocket)
        try:
            self.sock.do_handshake()
        except ssl.SSLWantReadError:
            self.loop.modify(self.sock, EVENT_READ, self.on_handshake)
        except ssl.SSLWantWriteError:
            self.loop.modify(self.sock, EVENT_WRITE, self.on_handshake)
        except Exception as error:  # A certificate that does not verify, a reset.
            self.finish(error)
        else:
            self.on_writable()

    def on_writable(self) -> None:
        """Send what is left of the request through TLS."""
        assert self.sock is not None
        try:
            self.sent += self.sock.send(self.request[self.sent :])
        except ssl.SSLWantWriteError:
            pass
        except ssl.SSLWantReadError:
            self.loop.modify(self.sock, EVENT_READ, self.on_writable)
            return
        except Exception as error:
            self.finish(error)
            return
        self.after_send()

    def on_readable(self) -> None:
        """Read the next piece of the response through TLS, and any it holds back."""
        self.read_record()
        # Bytes that TLS decrypted but did not return yet make no readiness
        # event on the socket: read them now, or wait for nothing.
        while isinstance(self.sock, ssl.SSLSocket) and self.sock.pending():
            self.read_record()

    def read_record(self) -> None:
        """Receive decrypted bytes: a whole TLS record when RECV_SIZE allows."""
        assert self.sock is not None
        try:
            data = self.sock.recv(RECV_SIZE)
        except ssl.SSLWantReadError:
            return  # Only part of a TLS record has arrived.
        except ssl.SSLWantWriteError:
            self.loop.modify(self.sock, EVENT_WRITE, self.on_readable)
            return
        except Exception as error:
            self.finish(error)
            return
        self.loop.modify(self.sock, EVENT_READ, self.on_readable)  # After a WantWrite.
        self.received(data)


# --8<-- [end:https]
