"""Exercise: refuse a request body over ``MAX_BODY`` bytes.

The finished server reads every request body to its end, and drops it.
A client that announces ``Content-Length: 1000000000`` keeps a task busy
reading a gigabyte nobody wants, or, if it never sends it, waiting for
it until the idle timeout.  Answer such a request with ``413 Content Too
Large`` as soon as its head has been read, before any of its body, and
close the connection.  A body of ``MAX_BODY`` bytes or fewer is read as
before.

This is the finished server's connection code (``serve_connection`` in
``stage2_generators/server/http_server.py``), copied so that you can
change it; ``handler`` is what the server runs for each connection.
"""

import types
from collections.abc import Generator
from typing import Any

from shared.testsite.site import Site
from stage2_generators.server.http_server import (
    BadRequest,
    Limits,
    RequestParser,
    exchange,
    send_error,
)
from stage2_generators.server.streams import StreamReader, StreamWriter
from stage2_generators.server.tcp import ClientConnected
from stage2_generators.tasks import wait_for

MAX_BODY = 1024  # Bytes of a request body; more gets 413.


def handler(site: Site, limits: Limits) -> ClientConnected:
    """Return the callback that serves one connection."""
    return lambda reader, writer: serve_connection(site, reader, writer, limits)


@types.coroutine
def serve_connection(
    site: Site, reader: StreamReader, writer: StreamWriter, limits: Limits
) -> Generator[Any, None, None]:
    """Answer the requests of one connection, in order, until it ends."""
    parser = RequestParser(limits.max_head_size)
    try:
        while (
            yield from wait_for(
                exchange(site, parser, reader, writer), limits.idle_timeout
            )
        ):
            pass
    except BadRequest as error:
        send_error(writer, error.status)  # Answers, then closes.
    except (TimeoutError, ConnectionError):
        writer.abort()
