"""Wrong: the body's bytes are counted as they arrive, not announced.

The limit holds, but only once more than MAX_BODY bytes have come: a
client that announces a huge body and sends nothing keeps the task
waiting until the idle timeout.
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

MAX_BODY = 1024


class BodyTooLarge(Exception):
    """More than MAX_BODY bytes of a body have arrived."""


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
        send_error(conn, writer, 413, str(error))
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
    """Return the next whole request, counting its body as it comes."""
    request, received = None, 0
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data((yield from reader.read(FEED_SIZE)))
        elif isinstance(event, h11.Request):
            request = event
        elif isinstance(event, h11.Data):
            received += len(event.data)
            if received > MAX_BODY:
                raise BodyTooLarge(f"over {MAX_BODY} bytes of body")
        elif isinstance(event, h11.EndOfMessage):
            return request
        elif isinstance(event, h11.ConnectionClosed):
            return None
