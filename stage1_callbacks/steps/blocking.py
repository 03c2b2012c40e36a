"""Step 1: a blocking fetch, ten pages one after another.

Still wrong: while ``recv`` waits, the whole program waits.  The next
step, ``threads``, waits for several at once.
"""

import socket
import time

from shared.steps import (
    address,
    http_request,
    some_pages,
    status_line,
    url_from_argv,
)


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


if __name__ == "__main__":
    start = time.perf_counter()
    urls = some_pages(url_from_argv())
    for url in urls:
        print(f"{status_line(fetch(url))} {url}")
    seconds = time.perf_counter() - start
    print(f"{len(urls)} pages in {seconds:.3f} s, one after another")
