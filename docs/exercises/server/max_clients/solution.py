"""A solution: a count of the connections being served, kept by ``handler``.

No lock is needed: the count is read and changed between two yield
points, so no other task can run in between.  ``finally`` counts a
connection out however it ends: the client closed it, it timed out, or
the server shut down.  A connection refused still gets its request read,
so that the client, which sent it, reads a whole answer.
"""

import types
from collections.abc import Generator
from typing import Any

from shared.testsite.site import Site
from stage2_generators.server.http_server import (
    BadRequest,
    Limits,
    RequestParser,
    receive_request,
    send_error,
    serve_connection,
)
from stage2_generators.server.streams import StreamReader, StreamWriter
from stage2_generators.server.tcp import ClientConnected
from stage2_generators.tasks import wait_for

MAX_CLIENTS = 2  # Connections served at once; more get 503.


class Clients:
    """The number of connections being served."""

    def __init__(self) -> None:
        self.count = 0


def handler(site: Site, limits: Limits) -> ClientConnected:
    """Return the callback that serves one connection."""
    clients = Clients()  # One count for all the server's connections.
    return lambda reader, writer: serve_or_refuse(
        clients, site, reader, writer, limits
    )


@types.coroutine
def serve_or_refuse(
    clients: Clients,
    site: Site,
    reader: StreamReader,
    writer: StreamWriter,
    limits: Limits,
) -> Generator[Any, None, None]:
    """Serve the connection if there is room, else answer 503."""
    if clients.count >= MAX_CLIENTS:
        yield from refuse(reader, writer, limits)
        return
    clients.count += 1
    try:
        yield from serve_connection(site, reader, writer, limits)
    finally:
        clients.count -= 1


@types.coroutine
def refuse(
    reader: StreamReader, writer: StreamWriter, limits: Limits
) -> Generator[Any, None, None]:
    """Read one request, answer it 503, and close."""
    parser = RequestParser(limits.max_head_size)
    try:
        yield from wait_for(
            receive_request(parser, reader), limits.idle_timeout
        )
    except (BadRequest, TimeoutError, ConnectionError):
        writer.abort()
        return
    send_error(writer, 503)  # Answers, closes.
