"""Follows off-site links: a crawler taking any host whose name ends with a root's host.

``url_allowed`` comes from ``CrawlerBase``, so the bug reads the same in
every shape.
"""

import urllib.parse
from typing import Any

import stage1_callbacks
import stage2_generators
import stage3_asyncio
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 2
RULE = "test_url_allowed_strict: rule docs/contract.md#urls"
HINTS = {
    "callbacks": f"{RULE}; read docs/callbacks.md#crawling-the-site",
    "generators": f"{RULE}; read docs/coroutines.md#the-queue-crawler",
    "asyncio": f"{RULE}; read docs/asyncio.md#the-step-the-queue-crawler-on-asyncio",
}


def host_of(url: str) -> str:
    try:
        return urllib.parse.urlsplit(url).hostname or ""
    except ValueError:
        return ""


def url_allowed(self: Any, url: str) -> bool:
    # The bug: notexample.com and foo.example.com end with example.com.
    roots = {host_of(root) for root in self.roots} - {""}
    host = host_of(url)
    web = url.lower().startswith(("http://", "https://"))
    return web and bool(host) and any(host.endswith(root) for root in roots)


class HostSuffixCallbacks(stage1_callbacks.Crawler):
    url_allowed = url_allowed


class HostSuffixGenerators(stage2_generators.Crawler):
    url_allowed = url_allowed


class HostSuffixAsyncio(stage3_asyncio.Crawler):
    url_allowed = url_allowed


class TestCallbacks(AcceptanceTests):
    stage = broken_stage(stage1_callbacks, HostSuffixCallbacks)
    shape = "callbacks"


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, HostSuffixGenerators)
    shape = "generators"


class TestAsyncio(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, HostSuffixAsyncio)
    shape = "asyncio"
