"""Never releases a response: stage 3 reading an answer without ``async with``.

A response that is cut at ``max_size`` or fails half-way is left open, and
its connection with it, until the garbage collector finds it.
"""

from typing import Any

import stage3_asyncio
from shared.web.http import Response
from stage3_asyncio.crawler import read_body
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 4
ONE_FAILURE = True  # Not also a test that runs when the collector finds the response.
HINTS = {
    "asyncio": (
        "test_sockets_are_closed_on_every_error_path: rule docs/contract.md#entry-points;"
        " read docs/real-asyncio.md#one-request"
    ),
}


class NeverReleasesAsyncio(stage3_asyncio.Crawler):
    async def request(self, url: str, max_size: int) -> Any:
        response = await self.send(url)  # The bug: no async with, no release().
        headers = {name.lower(): value for name, value in response.headers.items()}
        body = await read_body(response, headers.get("content-encoding"), max_size)
        return Response(response.status, headers, body[:max_size], len(body) > max_size)


class TestAsyncio(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, NeverReleasesAsyncio)
    shape = "asyncio"
