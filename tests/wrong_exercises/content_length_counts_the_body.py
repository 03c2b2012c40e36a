"""Wrong: the body's bytes are counted as they arrive, not announced.

The limit holds, but only once more than MAX_BODY bytes have come: a
client that announces a huge body and sends nothing keeps the task
waiting until the idle timeout.
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
    """The finished server's parser, with a limit on the body received."""

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.received = 0

    def on_body(self, body: bytes) -> None:
        super().on_body(body)
        self.received += len(body)
        if self.received > MAX_BODY:
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
