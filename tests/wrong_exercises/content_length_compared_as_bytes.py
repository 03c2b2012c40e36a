"""Wrong: the announced size is compared as bytes, not as a number.

b"1000000" sorts before b"1024", so a body of a million bytes passes.
"""

import functools
import types
from collections.abc import Generator
from typing import Any

import h11

from shared.testsite.site import Site
from stage2_generators.server.http_server import (
    FEED_SIZE,
    Limits,
    answer,
    response_bytes,
    send_error,
)
from stage2_generators.server.streams import StreamReader, StreamWriter
from stage2_generators.server.tcp import ClientConnected
from stage2_generators.tasks import wait_for

MAX_BODY = 1024  # Bytes of a request body; more gets 413.


class BodyTooLarge(Exception):
    """The head of a request announces a body over MAX_BODY bytes."""


def handler(site: Site, limits: Limits) -> ClientConnected:
    """Return the callback that serves one connection."""
    return lambda reader, writer: serve_connection(site, reader, writer, limits)


@types.coroutine
def serve_connection(
    site: Site, reader: StreamReader, writer: StreamWriter, limits: Limits
) -> Generator[Any, None, None]:
    """Answer the requests of one connection, in order, until it ends."""
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=limits.max_head_size)
    talk = functools.partial(exchange, site, conn, reader, writer)
    try:
        while (yield from wait_for(talk(), limits.idle_timeout)):
            conn.start_next_cycle()
    except BodyTooLarge as error:
        send_error(conn, writer, 413, str(error))  # Answers, then closes.
    except h11.RemoteProtocolError as error:
        send_error(conn, writer, error.error_status_hint, str(error))
    except (TimeoutError, ConnectionError):
        writer.abort()


@types.coroutine
def exchange(
    site: Site, conn: h11.Connection, reader: StreamReader, writer: StreamWriter
) -> Generator[Any, None, bool]:
    """Read one request, answer it; return False to close the connection."""
    request = yield from receive_request(conn, reader)
    if request is None:
        return False
    response = yield from answer(site, request)
    writer.write(response_bytes(conn, request.method, response))
    yield from writer.drain()
    return conn.our_state is not h11.MUST_CLOSE


@types.coroutine
def receive_request(
    conn: h11.Connection, reader: StreamReader
) -> Generator[Any, None, h11.Request | None]:
    """Return the next whole request, None at the end.

    Raises BodyTooLarge as soon as the head announces too big a body.
    """
    request = None
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data((yield from reader.read(FEED_SIZE)))
        elif isinstance(event, h11.Request):
            check_body_size(event)  # Before a byte of the body is read.
            request = event
        elif isinstance(event, h11.EndOfMessage):
            return request
        elif isinstance(event, h11.ConnectionClosed):
            return None


def check_body_size(request: h11.Request) -> None:
    """Raise BodyTooLarge if ``request`` announces over MAX_BODY bytes."""
    for name, value in request.headers:  # h11 gives names in lower case.
        if name == b"content-length" and value > str(MAX_BODY).encode():
            raise BodyTooLarge(f"a body of {value!r} bytes is too large")
