"""A solution: a socket with a timeout, closed by ``with``.

``create_connection`` sets the timeout on the socket: from then on every
``connect``, ``send`` and ``recv`` raises ``TimeoutError`` when it has
waited that long.  The ``with`` block closes the socket on the way out,
whether the fetch ends or raises.
"""

import socket

from shared.steps import address, http_request


def fetch(url: str, timeout: float) -> bytes:
    """Return the whole response to a GET of ``url``.

    Raises TimeoutError when the server is silent for ``timeout`` seconds.
    """
    with socket.create_connection(address(url), timeout=timeout) as sock:
        sock.sendall(http_request(url))
        response = b""
        chunk = sock.recv(4096)
        while chunk:
            response += chunk
            chunk = sock.recv(4096)
    return response
