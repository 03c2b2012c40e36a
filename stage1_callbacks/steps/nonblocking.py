"""Step 3: a non-blocking socket, and a busy loop around it.

``setblocking(False)`` makes every socket call return at once.  ``connect``
raises BlockingIOError to say the connection is under way; ``send`` and
``recv`` raise it when they cannot go on yet.  Nothing waits any more, so
the program must ask again, and again, until the socket is ready.

Still wrong: the asking.  The loop spins the CPU at full speed while the
network takes its time, and it can ask about only one socket.  The next
step, ``callback``, lets the operating system say which socket is ready.
"""

import contextlib
import socket
import time

from shared.steps import address, http_request, status_line, url_from_argv


def start_connecting(url: str) -> socket.socket:
    """Return a non-blocking socket that is connecting to ``url``'s server."""
    sock = socket.socket()
    sock.setblocking(False)
    with contextlib.suppress(BlockingIOError):  # Raised to say "under way".
        sock.connect(address(url))
    return sock


def fetch(url: str) -> tuple[bytes, int]:
    """Return the response to a GET of ``url`` and how often the loop spun."""
    sock = start_connecting(url)
    spins = 0
    while True:
        try:
            sock.send(http_request(url))
            break
        except BlockingIOError:  # Not connected yet.
            spins += 1
    response = b""
    while True:
        try:
            chunk = sock.recv(4096)
        except BlockingIOError:  # Nothing has arrived yet: ask again at once.
            spins += 1
            continue
        if not chunk:
            break
        response += chunk
    sock.close()
    return response, spins


if __name__ == "__main__":
    url = url_from_argv()
    start = time.perf_counter()
    response, spins = fetch(url)
    print(f"{status_line(response)} {url}")
    print(f"{len(response)} bytes in {time.perf_counter() - start:.3f} s")
    print(f"asked the socket {spins} times in vain")
