"""Step 3: a non-blocking socket, and a busy loop around it.

``setblocking(False)`` makes every socket call return at once.  A call
that cannot finish raises an error that means "not now": ``connect``
says the connection is under way, ``send`` that it is not made yet,
``recv`` that nothing has arrived.  The program must ask again, and
again, until the call succeeds.

Which error says "not now" depends on the system, and the code accepts
each: ``connect`` raises BlockingIOError everywhere (EINPROGRESS on Linux
and macOS, WSAEWOULDBLOCK on Windows); ``send`` before the connection is
made raises BlockingIOError on Linux, but OSError(ENOTCONN) on macOS,
the BSDs and Windows.  A connection that failed is in SO_ERROR on all.

Still wrong: the asking.  The loop never sleeps: it asks thousands of
times and burns processor time while the network takes its own (the
program prints both), and it can ask about only one socket.  The next
step, ``callback``, lets the operating system say which socket is ready.
"""

import contextlib
import errno
import os
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


def check_connection(sock: socket.socket) -> None:
    """Raise the error of a connection attempt that failed, if it did."""
    error = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if error:  # Reading SO_ERROR clears it: raise it now or never.
        raise OSError(error, os.strerror(error))


def not_connected_yet(error: OSError) -> bool:
    """Tell whether ``send`` failed only because the socket is connecting."""
    # Linux: EAGAIN (a BlockingIOError).  macOS, BSD: ENOTCONN.  Windows:
    # WSAENOTCONN, which is what errno.ENOTCONN means there.
    return isinstance(error, BlockingIOError) or error.errno == errno.ENOTCONN


def fetch(url: str) -> tuple[bytes, int]:
    """Return the response to a GET of ``url`` and how often the loop spun."""
    sock = start_connecting(url)
    spins = 0
    while True:
        check_connection(sock)
        try:
            sock.send(http_request(url))
            break
        except OSError as error:
            if not not_connected_yet(error):
                raise
            spins += 1  # Not connected yet: ask again at once.
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
    start, cpu = time.perf_counter(), time.process_time()
    url = url_from_argv()
    response, spins = fetch(url)
    print(f"{status_line(response)} {url}")
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"1 page in {seconds:.3f} s, {cpu:.3f} s of it busy on the CPU")
    print(f"asked the socket {spins} times in vain")
