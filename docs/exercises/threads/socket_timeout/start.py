"""Exercise: a fetch that gives up.

This is the blocking fetch of the first step.  Against a server that
accepts the connection and never answers, ``recv`` waits forever, and so
does the thread that called it.  Make ``fetch`` raise ``TimeoutError``
when the server has been silent for ``timeout`` seconds, and close the
socket whatever happens.
"""

import socket

from shared.steps import address, http_request


def fetch(url: str, timeout: float) -> bytes:
    """Return the whole response to a GET of ``url``."""
    sock = socket.socket()
    sock.connect(address(url))
    sock.send(http_request(url))
    response = b""
    chunk = sock.recv(4096)
    while chunk:
        response += chunk
        chunk = sock.recv(4096)
    sock.close()
    return response
