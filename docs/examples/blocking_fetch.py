"""The traditional way: a blocking socket per request and a thread per socket.

This is the baseline that the three stages improve on.  ``fetch`` is as
plain as network code gets: each call on the socket waits until it is done,
so the function reads top to bottom and keeps its state in local variables.
The price is that a waiting call holds its whole thread, so fetching many
pages at once (``fetch_all``) takes one thread per page.

Run it against the local test site (``python -m shared.site``)::

    python docs/examples/blocking_fetch.py http://127.0.0.1:8000/
"""

from __future__ import annotations

import socket
import sys
import threading

from shared.http import build_request, request_target


# --8<-- [start:fetch]
def fetch(url: str) -> bytes:
    """GET ``url`` over a blocking socket; return the raw response, head and body."""
    host, port, _ = request_target(url)
    with socket.create_connection((host, port)) as sock:  # Waits for the handshake.
        sock.sendall(build_request(url))  # Waits until the kernel has taken it all.
        chunks = []
        chunk = sock.recv(4096)  # Waits for the first bytes of the answer.
        while chunk:
            chunks.append(chunk)
            chunk = sock.recv(4096)  # Waits again; b"" means the server closed.
    return b"".join(chunks)


# --8<-- [end:fetch]


# --8<-- [start:fetch_all]
def fetch_all(urls: list[str]) -> dict[str, bytes]:
    """Fetch every URL at the same time, one thread each; return the responses."""
    responses: dict[str, bytes] = {}

    def worker(url: str) -> None:
        responses[url] = fetch(url)  # Each thread writes its own key.

    threads = [threading.Thread(target=worker, args=(url,)) for url in urls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()  # Waits until that thread's fetch has returned.
    return responses


# --8<-- [end:fetch_all]


if __name__ == "__main__":
    print(fetch(sys.argv[1]).split(b"\r\n")[0].decode())
