"""Wrong: the announced size is compared as text, not as a number.

"1000000" sorts before "1024", so a body of a million bytes passes.
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


class BodyLimit(RequestParser):
    """The finished server's parser, with a limit on the announced body."""

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        if self.headers.get("content-length", "0") > str(MAX_BODY):
            self.refuse(413)


def handler(site: Site, limits: Limits) -> ClientConnected:
    """Return the callback that serves one connection."""
    return lambda reader, writer: serve_connection(site, reader, writer, limits)


@types.coroutine
def serve_connection(
    site: Site, reader: StreamReader, writer: StreamWriter, limits: Limits
) -> Generator[Any, None, None]:
    """Answer the requests of one connection, in order, until it ends."""
    parser = BodyLimit(limits.max_head_size)
    try:
        while (yield from wait_for(exchange(site, parser, reader, writer), limits.idle_timeout)):
            pass
    except BadRequest as error:
        send_error(writer, error.status)  # Answers, then closes.
    except (TimeoutError, ConnectionError):
        writer.abort()
