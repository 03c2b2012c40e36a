"""Step 6 of the server: HTTP parsed in C by llhttp instead of h11.

Under keep-alive, h11 (Python) is most of what a request costs the finished
server.  httptools wraps llhttp, the C parser aiohttp shares: fed bytes, it
calls our ``on_url``, ``on_header`` and ``on_message_complete``.  We write
the head of the answer by hand.  llhttp keeps an HTTP/1.0 connection that
asks for it (``Connection: keep-alive``); h11 closes them all.

Still wrong, and why the finished server keeps h11: no timer, no limit on a
request head, and a method llhttp does not know (``BREW``) is a parse
error: 400 and the connection lost, not 501 and the next answer.
"""

import re
from email.utils import formatdate

import httptools

from shared.site import Request, Site, text_response
from stage2_generators.events import get_running_loop
from stage2_generators.loop import run
from stage2_generators.server.steps.accept import Coroutine, connect
from stage2_generators.server.streams import StreamReader, StreamWriter
from stage2_generators.server.tcp import start_server


class RequestCollector:
    """Gathers what the parser reports into whole requests: (method, target, host, keep)."""

    def __init__(self) -> None:
        self.parser, self.target, self.host = httptools.HttpRequestParser(self), b"", b""
        self.done: list[tuple[str, str, str, bool]] = []

    def on_url(self, url: bytes) -> None:
        self.target += url  # A long target may arrive in pieces.

    def on_header(self, name: bytes, value: bytes) -> None:
        self.host = value if name.lower() == b"host" else self.host

    def on_message_complete(self) -> None:  # A body, if any, was skipped: no on_body.
        method, keep = self.parser.get_method().decode(), self.parser.should_keep_alive()
        self.done.append((method, self.target.decode(), self.host.decode(), keep))
        self.target, self.host = b"", b""


def answer_bytes(site: Site, method: str, target: str, host: str, keep: bool) -> bytes:
    """Return the whole answer to one request (no method: a bad one); HEAD gets the head alone."""
    bad = text_response(400, "400: Bad Request")
    response = site.respond(Request(method, target, host)) if method else bad
    lines = [f"HTTP/1.1 {response.status} ", *(f"{n}: {v}" for n, v in response.headers.items()),
             f"Content-Length: {len(response.body)}", f"Date: {formatdate(usegmt=True)}",
             f"Connection: {'keep-alive' if keep else 'close'}", "", ""]  # fmt: skip
    return "\r\n".join(lines).encode("latin-1") + (b"" if method == "HEAD" else response.body)


def serve_connection(site: Site, reader: StreamReader, writer: StreamWriter) -> Coroutine:
    """Answer the requests of one connection, in order, until one says close."""
    collector, keep = RequestCollector(), True
    try:
        while keep and (data := (yield from reader.read(65536))):
            try:
                collector.parser.feed_data(data)
            except httptools.HttpParserError:  # Not HTTP: nowhere to find the next request.
                collector.done.append(("", "", "", False))  # Answered 400, after the others.
            for method, target, host, keep in collector.done:
                writer.write(answer_bytes(site, method, target, host, keep))
                if not keep:
                    break
            collector.done.clear()
            yield from writer.drain()
    except ConnectionError:  # The client is gone: nobody to answer.
        writer.abort()
    writer.close()


def ask(port: int, request: bytes) -> Coroutine:
    """Send ``request``, then print each answer's status and what it says of the connection."""
    with (yield from connect(port)) as sock:
        yield from get_running_loop().sock_sendall(sock, request)
        sock.shutdown(1)  # No more requests: read the answers until the server hangs up.
        answers = b""
        while data := (yield from get_running_loop().sock_recv(sock, 65536)):
            answers += data
    said = re.findall(r"HTTP/1.1 (\d+) .*?Connection: ([\w-]+)", answers.decode(), re.DOTALL)
    asked = re.findall(r"^[A-Z]+ / HTTP/1.\d", request.decode(), re.MULTILINE)
    print(" + ".join(asked), "->", ", ".join(" ".join(pair) for pair in said))


def main() -> Coroutine:
    site = Site(10)
    server = yield from start_server(lambda r, w: serve_connection(site, r, w))
    kept = b"GET / HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
    for request in (kept + b"GET / HTTP/1.0\r\n\r\n" * 2, b"BREW / HTTP/1.1\r\n\r\n"):
        yield from ask(server.sockets[0].getsockname()[1], request)
    server.close()
    yield from server.wait_closed()


if __name__ == "__main__":
    run(main())
