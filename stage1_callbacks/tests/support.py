"""Helpers for stage 1's own tests: a one-fetch runner.

``ScriptedServer`` (from tests.servers) gives byte-level control over what
a client sees.  ``run_fetch`` runs one Fetcher on a fresh loop and
checks what every fetch must leave behind: exactly one callback, its socket
closed and unregistered, its timer cancelled.  TLS contexts come from
tests.tls.
"""

from __future__ import annotations

from typing import Any

from shared.web.resolver import Resolver
from stage1_callbacks.fetcher import Fetcher
from stage1_callbacks.loop import EventLoop
from stage1_callbacks.tls import HttpsFetcher
from tests.servers import DEADLINE
from tests.tls import client_tls


class Outcome:
    """What a fetch reported: the list of Fetchers its callback was called with."""

    def __init__(self, loop: EventLoop) -> None:
        self.loop = loop
        self.calls: list[Fetcher] = []

    def callback(self, fetcher: Fetcher) -> None:
        self.calls.append(fetcher)
        self.loop.stop()


def run_fetch(url: str, fetcher_class: type[Fetcher] = Fetcher, **options: Any) -> Fetcher:
    """Run one Fetcher on a fresh loop until it calls back, and check it cleaned up.

    Raises AssertionError when the fetch reports twice, or leaves a socket,
    a timer or a callback behind.
    """
    options.setdefault("timeout", DEADLINE)
    options.setdefault("max_size", 2**20)
    options.setdefault("resolver", Resolver())
    if fetcher_class is HttpsFetcher:
        options.setdefault("ssl_context", client_tls())
    loop = EventLoop()
    outcome = Outcome(loop)
    try:
        fetcher = fetcher_class(url, loop, outcome.callback, **options)
        fetcher.start()
        loop.run()  # Until the callback stops it, or the fetch's own timeout fires.
        # A second callback would be waiting in loop.ready now.
        assert not loop.has_work(), "the fetch left a socket, a timer or a callback behind"
    finally:
        loop.close()
    assert outcome.calls == [fetcher], "the fetch must call back exactly once"
    assert fetcher.done and fetcher.sock is None
    assert fetcher.timer is not None and fetcher.timer.cancelled
    assert (fetcher.response is None) != (fetcher.exception is None)
    return fetcher
