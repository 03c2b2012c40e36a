"""https for stage 2: a TLS handshake over a non-blocking socket, as a coroutine.

Not the lesson of the stage, so it lives apart from ``crawler.py``: once
the socket is connected, ``start_tls`` wraps it and completes the
handshake, and from then on the loop's ``sock_sendall`` and ``sock_recv``
work on the wrapped socket as on a plain one (they also wait on the
SSLWantReadError and SSLWantWriteError that TLS raises instead of
blocking).  asyncio has no such coroutine: it speaks TLS inside its
transports (``ssl=`` on ``create_connection``), which aiohttp uses.
"""

from __future__ import annotations

import selectors
import socket
import ssl
from collections.abc import Generator
from typing import Any

from stage2_generators.events import get_running_loop


# --8<-- [start:start_tls]
def start_tls(
    sock: socket.socket, host: str, context: ssl.SSLContext
) -> Generator[Any, None, ssl.SSLSocket]:
    """Return ``sock``, connected, wrapped in TLS with the handshake done.

    Raises OSError (ssl.SSLError when the handshake fails, such as
    ssl.SSLCertVerificationError); the TLS socket is closed then.
    """
    tls_sock = context.wrap_socket(sock, server_hostname=host, do_handshake_on_connect=False)
    try:
        yield from do_handshake(tls_sock)
    except BaseException:  # A failed handshake, or cancelled: leave no socket open.
        tls_sock.close()
        raise
    return tls_sock


def do_handshake(sock: ssl.SSLSocket) -> Generator[Any, None, None]:
    """Take the handshake of the non-blocking ``sock`` to its end.  Raises OSError."""
    loop = get_running_loop()
    while True:
        try:
            sock.do_handshake()
            return
        except ssl.SSLWantReadError:  # TLS waits for the server's next message.
            event = selectors.EVENT_READ
        except ssl.SSLWantWriteError:
            event = selectors.EVENT_WRITE
        yield from loop._wait_ready(sock, event)  # Outside the except: see _recv_now.


# --8<-- [end:start_tls]
