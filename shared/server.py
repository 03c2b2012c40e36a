"""Run an ``aiohttp.web`` application in a background thread.

Tests and the CLI need a server while the crawler runs in the main thread on
its own event loop.  ``ServerThread`` starts an application on 127.0.0.1
(port 0 by default, so the operating system picks a free port and nobody
races for it), waits until it listens, and stops it cleanly on exit.
"""

from __future__ import annotations

import asyncio
import threading
from types import TracebackType

from aiohttp import web


class ServerThread:
    """A context manager that serves ``app`` from a thread of its own.

    Raises OSError from ``__enter__`` when the port cannot be bound.
    """

    def __init__(self, app: web.Application, host: str = "127.0.0.1", port: int = 0):
        self.app = app
        self.host = host
        self.port = port
        self._loop = asyncio.new_event_loop()
        # Handlers still running at exit (a test's never-ending response) are
        # cancelled after shutdown_timeout rather than waited for.
        self._runner = web.AppRunner(
            app, access_log=None, handle_signals=False, shutdown_timeout=0.5
        )
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    @property
    def url(self) -> str:
        """The root URL of the running server, with a trailing slash."""
        return f"http://{self.host}:{self.port}/"

    def __enter__(self) -> ServerThread:
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        try:
            future.result(timeout=30)
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
        cleanup = asyncio.run_coroutine_threadsafe(self._cleanup(), self._loop)
        cleanup.result(timeout=30)
        self._stop_loop()

    async def _start(self) -> None:
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, backlog=4096)
        await site.start()
        self.port = self._runner.addresses[0][1]

    async def _cleanup(self) -> None:
        await self._runner.cleanup()
        # aiohttp forgets a handler whose client has gone (a crawler that
        # timed out) and leaves it running: cancel it, so that it finishes
        # before the loop closes instead of being destroyed while pending.
        leftovers = asyncio.all_tasks() - {asyncio.current_task()}
        for task in leftovers:
            task.cancel()
        await asyncio.gather(*leftovers, return_exceptions=True)

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()
