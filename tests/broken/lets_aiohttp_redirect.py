"""Lets aiohttp follow redirects: stage 3 leaving out ``allow_redirects=False``.

The most natural request to write with aiohttp; none of the crawl's
redirects is then recorded, counted or merged with another.
"""

import aiohttp
import yarl

import stage3_asyncio
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 4
HINTS = {
    "asyncio": (
        "test_redirect_cycle: rule docs/contract.md#fetching-one-url;"
        " read docs/real-asyncio.md#redirects"
    ),
}


class LetsAiohttpRedirectAsyncio(stage3_asyncio.Crawler):
    async def send(self, url: str) -> aiohttp.ClientResponse:
        assert self.session is not None
        # The bug: aiohttp follows each redirect itself, so the crawler never sees one.
        return await self.session.get(yarl.URL(url, encoded=True))


class TestAsyncio(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, LetsAiohttpRedirectAsyncio)
    shape = "asyncio"
