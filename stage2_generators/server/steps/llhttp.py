"""Step 6 of the server: HTTP for the test site, parsed in C by llhttp.

Under keep-alive, most of what a request costs is parsing it, and a
parser written in Python (h11) pays for every byte in Python.  httptools
wraps llhttp, the C parser aiohttp shares: fed bytes, it calls our
``on_url``, ``on_header`` and ``on_message_complete``.  It keeps an
HTTP/1.0 connection that asks for it, as aiohttp does.  Still wrong, and
what the finished server adds: no timer, no limit on a request head, and
a method llhttp does not know (``BREW``) is a parse error: 400, not 501.
"""

import functools
import re
import socket
from email.utils import formatdate

import httptools

from shared.testsite.site import Request, Site, text_response
from stage2_generators.events import get_running_loop
from stage2_generators.server.steps import accept
from stage2_generators.server.steps.command import main_or_serve
from stage2_generators.tasks import create_task

BAD_REQUEST = text_response(400, "400: Bad Request")  # Bytes that are not HTTP.


class RequestCollector:
    """Gathers what the parser reports into whole requests."""

    def __init__(self) -> None:
        self.parser = httptools.HttpRequestParser(self)
        self.url, self.host = b"", b""
        self.done: list[tuple[bytes, bytes, bytes, bool]] = []  # b"": not HTTP.

    def on_url(self, url: bytes) -> None:
        self.url += url  # A long target may come in pieces.

    def on_header(self, name: bytes, value: bytes) -> None:
        self.host = value if name.lower() == b"host" else self.host

    def on_message_complete(self) -> None:  # A body was skipped.
        keep = self.parser.should_keep_alive()
        self.done.append((self.parser.get_method(), self.url, self.host, keep))
        self.url, self.host = b"", b""


def answer(site: Site, asked: tuple[bytes, bytes, bytes, bool]) -> bytes:
    """Return the whole answer to one request; HEAD gets the head alone."""
    method, url, host = (part.decode("latin-1") for part in asked[:3])
    got = site.respond(Request(method, url, host)) if method else BAD_REQUEST
    head = f"HTTP/1.1 {got.status} \r\nContent-Length: {len(got.body)}\r\n"
    head += f"Date: {formatdate(usegmt=True)}\r\n"
    head += f"Connection: {'keep-alive' if asked[3] else 'close'}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in got.headers.items()) + "\r\n"
    return head.encode("latin-1") + (b"" if method == "HEAD" else got.body)


def handle(site: Site, conn: socket.socket) -> accept.Coroutine:
    """Answer each request on ``conn``, in order, until one says close."""
    collector, keep, loop = RequestCollector(), True, get_running_loop()
    while keep and (data := (yield from loop.sock_recv(conn, 65536))):
        try:
            collector.parser.feed_data(data)
        except httptools.HttpParserError:  # No next request to find.
            collector.done.append((b"", b"", b"", False))
        for asked in collector.done:
            yield from loop.sock_sendall(conn, answer(site, asked))
            if not (keep := asked[3]):
                break  # What follows "close" is not answered.
        collector.done.clear()


def ask(port: int, request: bytes) -> accept.Coroutine:
    """Send ``request``; print each answer's status and Connection."""
    with (yield from accept.connect(port)) as sock:
        yield from get_running_loop().sock_sendall(sock, request)
        got = b""
        while data := (yield from get_running_loop().sock_recv(sock, 65536)):
            got += data
    said = re.findall(r"(?s)1.1 (\d+) .*?Connection: ([\w-]+)", got.decode())
    answers = ", ".join(map(" ".join, said))
    print(f"{request.count(b' HTTP/1.')} asked, {len(said)} answered:", answers)


def main() -> accept.Coroutine:
    listener = accept.listen()
    handler = functools.partial(handle, Site(10))
    server = create_task(accept.serve(listener, handler))
    http10 = b"GET / HTTP/1.0\r\n"
    kept = (
        b"GET / HTTP/1.1\r\n\r\n" + http10 + b"Connection: keep-alive\r\n\r\n"
    )
    yield from ask(listener.getsockname()[1], kept + (http10 + b"\r\n") * 2)
    yield from ask(listener.getsockname()[1], b"BREW / HTTP/1.1\r\n\r\n")
    server.cancel()


if __name__ == "__main__":
    main_or_serve(main, functools.partial(handle, Site(10)), accept.serve)
