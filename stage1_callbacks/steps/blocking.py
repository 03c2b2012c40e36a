"""Step 1: a blocking fetch.

A socket, a request, and ``recv`` until the server closes the connection.
Each call waits until its work is done, so the function reads top to
bottom and keeps its state in local variables.

Still wrong: while ``recv`` waits, the whole program waits.  Ten pages
take ten times as long as one.  The next step, ``threads``, waits for
several at once.
"""

import socket
import sys
import time
import urllib.parse

DEFAULT_URL = "http://127.0.0.1:8000/"  # Where ``python -m shared.site`` serves.


def url_from_argv() -> str:
    """Return the URL given on the command line, or the test site's."""
    return sys.argv[1] if len(sys.argv) > 1 else DEFAULT_URL


def http_request(url: str) -> bytes:
    """Return an HTTP/1.0 GET request for ``url``: the server closes at the end."""
    parts = urllib.parse.urlsplit(url)
    target = urllib.parse.quote(parts.path or "/", safe="/%") + "?" * bool(parts.query)
    target += parts.query
    return f"GET {target} HTTP/1.0\r\nHost: {parts.netloc}\r\n\r\n".encode()


def address(url: str) -> tuple[str, int]:
    """Return the (host, port) to connect to for ``url``."""
    parts = urllib.parse.urlsplit(url)
    return parts.hostname or "", parts.port or 80


def status_line(response: bytes) -> str:
    """Return the first line of an HTTP response, such as ``HTTP/1.0 200 OK``."""
    return response.split(b"\r\n")[0].decode()


# --8<-- [start:fetch]
def fetch(url: str) -> bytes:
    """Return the whole response to a GET of ``url``, waiting at every step."""
    sock = socket.socket()
    sock.connect(address(url))  # Waits for the connection.
    sock.send(http_request(url))
    response = b""
    chunk = sock.recv(4096)  # Waits for the first bytes.
    while chunk:
        response += chunk
        chunk = sock.recv(4096)  # Waits again; b"" means the server closed.
    sock.close()
    return response


# --8<-- [end:fetch]


if __name__ == "__main__":
    url = url_from_argv()
    start = time.perf_counter()
    response = fetch(url)
    print(f"{status_line(response)} {url}")
    print(f"{len(response)} bytes in {time.perf_counter() - start:.3f} s")
