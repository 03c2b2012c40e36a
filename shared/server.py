"""Run an ``aiohttp.web`` application in a background thread.

Tests and the CLI need a server while the crawler runs in the main thread on
its own event loop.  ``ServerThread`` starts an application on 127.0.0.1
(port 0 by default, so the operating system picks a free port and nobody
races for it), waits until it listens, and stops it cleanly on exit.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from types import TracebackType
from typing import Any, Self

from aiohttp import web

from shared.site import SERVERS, SITE, Site, make_app


class LoopThread:
    """An event loop in a thread of its own, set up by ``_start`` and torn down by ``_stop``.

    Use it as a context manager: ``__enter__`` returns once ``_start`` has
    run on the loop (re-raising its error), ``__exit__`` runs ``_stop``, then
    stops the loop and joins the thread.
    """

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        try:
            self._call(self._start())
        except BaseException:
            self._stop_loop()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self._call(self._stop())
        finally:
            self._stop_loop()

    async def _start(self) -> None:
        """Set up what the thread serves; runs on the loop."""

    async def _stop(self) -> None:
        """Tear down what ``_start`` set up; runs on the loop."""

    def _call(self, coroutine: Coroutine[Any, Any, None]) -> None:
        """Run ``coroutine`` on the loop and wait for it."""
        asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout=30)

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()


class ServerThread(LoopThread):
    """A context manager that serves ``app`` from a thread of its own.

    Raises OSError from ``__enter__`` when the port cannot be bound.
    """

    def __init__(self, app: web.Application, host: str = "127.0.0.1", port: int = 0):
        super().__init__()
        self.app = app
        self.host = host
        self.port = port
        # Handlers still running at exit (a test's never-ending response) are
        # cancelled after shutdown_timeout rather than waited for.
        self._runner = web.AppRunner(
            app, access_log=None, handle_signals=False, shutdown_timeout=0.5
        )

    @property
    def url(self) -> str:
        """The root URL of the running server, with a trailing slash."""
        return f"http://{self.host}:{self.port}/"

    @property
    def site(self) -> Site:
        """The test site the application serves.  Raises KeyError for another app."""
        return self.app[SITE]

    async def _start(self) -> None:
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, backlog=4096)
        await site.start()
        self.port = self._runner.addresses[0][1]

    async def _stop(self) -> None:
        await self._runner.cleanup()
        # aiohttp forgets a handler whose client has gone (a crawler that
        # timed out) and leaves it running: cancel it, so that it finishes
        # before the loop closes instead of being destroyed while pending.
        leftovers = asyncio.all_tasks() - {asyncio.current_task()}
        for task in leftovers:
            task.cancel()
        await asyncio.gather(*leftovers, return_exceptions=True)


def site_server(server: str, pages: int, latency: float = 0.0) -> Any:
    """Return a context manager serving the test site from a thread, with ``.url`` and ``.site``.

    ``server`` is ``"aiohttp"`` (aiohttp.web) or ``"generators"`` (the HTTP
    server on stage 2's loop).  Raises ValueError for a bad site size or
    latency, or an unknown server.
    """
    if server == "aiohttp":
        return ServerThread(make_app(pages, latency))
    if server == "generators":
        # Imported here: only this server needs stage 2 (and h11).
        from stage2_generators.http_server import SiteServerThread

        return SiteServerThread(Site(pages, latency))
    raise ValueError(f"unknown server {server!r}: choose from {', '.join(SERVERS)}")
