"""Speaks no TLS: a crawler that sends its plain request to an https URL too.

A Fetcher written from the chapter's first listings, which knows only
http: the https URL's port is right, but the server waits for a TLS
handshake and gets a GET.  In the asyncio shape aiohttp speaks TLS on its
own, so the bug cannot be written there.
"""

from typing import Any

import stage1_callbacks
import stage2_generators
from stage1_callbacks.crawler import Job
from stage1_callbacks.fetcher import Fetcher
from stage2_generators import loop as event_loop
from stage2_generators.crawler import Coroutine
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 4
ONE_FAILURE = True
RULE = "test_https_is_fetched_over_tls_with_its_certificate_checked: rule"
HINT = f"{RULE} docs/contract.md#fetching-one-url; read docs/build-your-own.md#https"
HINTS = {"callbacks": HINT, "generators": HINT}


class NoTlsCallbacks(stage1_callbacks.Crawler):
    def make_fetcher(self, job: Job) -> Fetcher:
        assert self.loop is not None
        options: dict[str, Any] = {
            "timeout": self.timeout,
            "max_size": self.max_size,
            "resolver": self.resolver,
            "user_agent": self.user_agent,
            "make_socket": self.make_socket,
        }
        # The bug: an https URL gets the plain Fetcher too.
        return Fetcher(job.url, self.loop, self.on_response, **options)


class NoTlsGenerators(stage2_generators.Crawler):
    def connect(self, host: str, port: int, use_tls: bool) -> Coroutine:
        loop = event_loop.get_running_loop()
        (family, proto, address), *_ = self.resolver.resolve(host, port)
        sock = self.make_socket(family, 1, proto)
        try:
            sock.setblocking(False)
            yield from loop.sock_connect(sock, address)
        except BaseException:
            sock.close()
            raise
        return sock  # The bug: no start_tls, whatever use_tls says.


class TestCallbacks(AcceptanceTests):
    stage = broken_stage(stage1_callbacks, NoTlsCallbacks)
    shape = "callbacks"


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, NoTlsGenerators)
    shape = "generators"
