"""Kept-alive connections that behave like the fresh ones of stages 1 and 2.

Stages 1 and 2 open a connection for each request, so whatever a server
does after its answer cannot reach the next request.  aiohttp keeps
connections open and hands them to later requests, which brings two cases
the chapter's crawler never met:

- The server closed a kept connection while it waited in the pool.  The
  request sent on it meets the end of the connection at once.  That says
  nothing about the page: ``Crawler.send`` sends the request again on
  another connection without counting a try, when ``pool_tracing`` has
  marked its ``Attempt`` as made on a kept connection.
- The server sent bytes on a kept connection that nobody asked for (an
  unsolicited response).  aiohttp would read them as the answer to the
  next request sent on that connection.  ``CarefulConnector`` closes such
  a connection instead of lending it out.

An idle connection has nothing to read, so before lending one out the
connector asks the socket, without waiting, whether it is readable: if it
is, the server has either closed it or sent something unasked, and the
connection is dropped (urllib3 checks its pooled connections the same way).

This module is about aiohttp's pool, not about asyncio: it is kept apart
from the crawler so the crawler reads as the lesson.  ``CarefulConnector``
overrides ``_get``, the one place where aiohttp takes a connection out of its
pool; the acceptance suite's hostile server checks that it still works.
"""

from __future__ import annotations

import dataclasses
import select
import types
from typing import Any

import aiohttp


class CarefulConnector(aiohttp.TCPConnector):
    """A TCPConnector that never lends out a kept connection with bytes waiting on it."""

    async def _get(self, key: Any, *args: Any) -> Any:  # Arguments differ across aiohttp versions.
        while (connection := await super()._get(key, *args)) is not None:
            protocol = connection.protocol
            # should_close: the server asked to close, or sent data no request is waiting for.
            if protocol is not None and not protocol.should_close and not _readable(protocol):
                return connection
            connection.close()  # Closed, or holding bytes that answer nothing: dropped.
        return None


def _readable(protocol: aiohttp.client_proto.ResponseHandler) -> bool:
    """Tell whether the connection's socket has bytes (or its end) waiting, without waiting."""
    transport = protocol.transport
    sock = None if transport is None else transport.get_extra_info("socket")
    if sock is None:
        return False
    readable, _, _ = select.select([sock], [], [], 0)
    return bool(readable)


@dataclasses.dataclass
class Attempt:
    """What aiohttp's tracing tells about one request: did it go on a kept connection?"""

    reused: bool = False


async def _on_reuse(
    session: aiohttp.ClientSession, context: types.SimpleNamespace, params: object
) -> None:
    context.trace_request_ctx.reused = True


def pool_tracing() -> aiohttp.TraceConfig:
    """Return a trace config that marks a request's ``Attempt`` if it reuses a connection."""
    trace = aiohttp.TraceConfig()
    trace.on_connection_reuseconn.append(_on_reuse)
    return trace


# The errors of a connection the server had closed: the end, or a reset on writing.
STALE_ERRORS = (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)
