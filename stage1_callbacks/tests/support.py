"""Helpers for stage 1's own tests: TLS contexts and a one-fetch runner.

``ScriptedServer`` (from shared.testing) gives byte-level control over what
a client sees.  ``run_fetch`` runs one Fetcher on a fresh loop and
checks what every fetch must leave behind: exactly one callback, its socket
closed and unregistered, its timer cancelled.

The certificates in the repository's ``tests/certs/`` (shared with stage 2's
tests) exist only for tests: ``ca.pem`` is a test certificate authority
and ``localhost.pem`` the certificate and key it signed for localhost,
127.0.0.1 and ::1, valid until 2126.  They were made with ``openssl req``
and ``openssl x509 -req``; the CA's key was thrown away.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

from shared.testing import DEADLINE
from stage1_callbacks.fetcher import Fetcher, Resolver
from stage1_callbacks.loop import EventLoop
from stage1_callbacks.tls import HttpsFetcher

CERTS = Path(__file__).parents[2] / "tests" / "certs"


def server_tls() -> ssl.SSLContext:
    """Return a server context with the test certificate for localhost."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(CERTS / "localhost.pem")
    return context


def client_tls() -> ssl.SSLContext:
    """Return a client context that trusts the test certificate authority only."""
    return ssl.create_default_context(cafile=CERTS / "ca.pem")


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
