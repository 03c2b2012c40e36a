"""Serve with aiohttp: the test site as an application, and a server in a thread.

``make_app`` wraps the test site (``shared.testsite.site.Site``, which does no I/O)
in an ``aiohttp.web`` application: one catch-all route hands every request
to ``Site.respond``, and a middleware counts requests and adds the site's
latency.  (``shared.cli.main.site_server`` picks this server or stage 2's own:
``shared/`` imports no stage.)

Tests and the CLI need a server while the crawler runs in the main thread on
its own event loop.  ``ServerThread`` starts an application on 127.0.0.1
(port 0 by default, so the operating system picks a free port and nobody
races for it), waits until it listens, and stops it cleanly on exit.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from types import TracebackType
from typing import Any, Self

from aiohttp import web
from aiohttp.typedefs import Middleware
from aiohttp.web_protocol import RequestHandler

from shared.testsite.site import DEFAULT_PAGES, Request, Site, SiteCounters, announce


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


# --- The test site as an aiohttp application ------------------------------------

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
SITE = web.AppKey("site", Site)
COUNTERS = web.AppKey("counters", SiteCounters)


def counting_middleware(latency: float) -> Middleware:
    """Return a middleware that counts requests and delays each response."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        with request.app[COUNTERS].counting(request.raw_path):
            if latency > 0:
                await asyncio.sleep(latency)
            return await handler(request)

    return middleware


async def answer(request: web.Request) -> web.StreamResponse:
    """Answer an aiohttp request from the application's ``Site``."""
    headers = {name.lower(): value for name, value in request.headers.items()}
    site_request = Request(request.method, request.raw_path, request.host, headers=headers)
    response = request.app[SITE].respond(site_request)
    return web.Response(status=response.status, headers=response.headers, body=response.body)


def make_app(pages: int = DEFAULT_PAGES, latency: float = 0.0) -> web.Application:
    """Return the test site as an aiohttp application.

    Raises ValueError when ``pages`` is below MIN_PAGES or latency is negative.
    """
    site = Site(pages, latency)
    app = web.Application(middlewares=[counting_middleware(latency)])
    app[SITE] = site
    app[COUNTERS] = site.counters
    app.router.add_route("*", "/{path:.*}", answer)
    return app


class AppServer:
    """An aiohttp application listening on ``host:port``, started and stopped in order.

    ``ServerThread`` (tests, the bench, ``crawl``) and ``serve`` (``python -m
    shared.testsite``) both start and stop through it, so both close every
    connection they accepted, even one that arrives as the server stops.
    """

    def __init__(self, app: web.Application, host: str, port: int) -> None:
        self.host = host
        self.port = port
        # Handlers still running at exit (a test's never-ending response) are
        # cancelled after shutdown_timeout rather than waited for.
        self._runner = web.AppRunner(
            app, access_log=None, handle_signals=False, shutdown_timeout=0.5
        )

    async def start(self) -> int:
        """Listen; return the port.  Raises OSError when the port cannot be bound."""
        await self._runner.setup()
        server = self._runner.server
        assert server is not None  # setup() made it.
        self._transports = track_transports(server)
        loop = asyncio.get_running_loop()
        try:
            self._listener = await loop.create_server(server, self.host, self.port, backlog=4096)
        except BaseException:
            await self._runner.cleanup()
            raise
        self.port = self._listener.sockets[0].getsockname()[1]
        return self.port

    async def stop(self) -> None:
        """Stop listening and close every connection, answered or not."""
        # Stop accepting, then give the connections just accepted one turn to
        # become transports before the listener closes: asyncio's Server
        # drops, without closing it, a connection it accepted in the turn it
        # was closed in (Python 3.11 to 3.13).
        loop = asyncio.get_running_loop()
        for listening in self._listener.sockets:
            loop.remove_reader(listening.fileno())
        await asyncio.sleep(0)
        self._listener.close()
        await self._runner.cleanup()
        # aiohttp forgets a handler whose client has gone (a crawler that
        # timed out) and leaves it running: cancel it, so that it finishes
        # before the loop closes instead of being destroyed while pending.
        leftovers = asyncio.all_tasks() - {asyncio.current_task()}
        for task in leftovers:
            task.cancel()
        await asyncio.gather(*leftovers, return_exceptions=True)
        # A connection whose handler started after the runner had listed the
        # connections to close is still open, and a cancelled handler does
        # not close its own.  Drop every connection still open,
        # then give the loop a turn to close their sockets before it stops.
        for transport in self._transports:
            transport.abort()
        await asyncio.sleep(0)


class ServerThread(LoopThread):
    """A context manager that serves ``app`` from a thread of its own.

    Raises OSError from ``__enter__`` when the port cannot be bound.
    """

    def __init__(self, app: web.Application, host: str = "127.0.0.1", port: int = 0):
        super().__init__()
        self.app = app
        self.host = host
        self.port = port
        self._server = AppServer(app, host, port)

    @property
    def url(self) -> str:
        """The root URL of the running server, with a trailing slash."""
        return f"http://{self.host}:{self.port}/"

    @property
    def site(self) -> Site:
        """The test site the application serves.  Raises KeyError for another app."""
        return self.app[SITE]

    async def _start(self) -> None:
        self.port = await self._server.start()

    async def _stop(self) -> None:
        await self._server.stop()


def track_transports(server: web.Server) -> weakref.WeakSet[asyncio.Transport]:
    """Return the set of the connections ``server`` is told about from now on.

    An aiohttp handler tells its server's ``connection_made`` about its new
    connection; this wraps that method.  The set holds each transport
    weakly: a closed one leaves it once nothing else holds it.
    """
    transports: weakref.WeakSet[asyncio.Transport] = weakref.WeakSet()
    register = server.connection_made

    def connection_made(handler: RequestHandler, transport: asyncio.Transport) -> None:
        transports.add(transport)
        register(handler, transport)

    server.connection_made = connection_made  # type: ignore[method-assign]
    return transports


async def serve(site: Site, host: str, port: int, listening: Callable[[int], object]) -> None:
    """Serve ``site`` until cancelled, calling ``listening(port)`` once it listens."""
    server = AppServer(make_app(site.pages, site.latency), host, port)
    listening(await server.start())
    try:
        await asyncio.Event().wait()  # Forever: Ctrl+C cancels this.
    finally:
        await server.stop()


def serve_with_aiohttp(site: Site, host: str, port: int) -> None:
    """Serve ``site`` with aiohttp.web until Ctrl+C."""
    asyncio.run(serve(site, host, port, lambda bound: announce(site.pages, host, bound)))
