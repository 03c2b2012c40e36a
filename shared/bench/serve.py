"""Serve the test site from a process of its own, for the benchmark.

``python -m shared.testsite`` is for people; this entry point is for the
benchmark, which needs to know the port the system picked and to read the
server's counters between runs.  It prints ``PORT <number>`` once it
listens, serves until its standard input closes, and adds two routes that
no page links to: ``/_bench/stats`` (requests counted and the most handled
at once, as JSON) and ``/_bench/reset`` (forget them).

    python -m shared.bench.serve --pages 10000 --latency-ms 0
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import resource
import sys
from collections.abc import Awaitable, Callable, Generator
from typing import Any

from aiohttp import web

from shared.testsite.server import SITE, Handler, make_app
from shared.testsite.site import Request, Response, Site, exact

STATS_PREFIX = "/_bench/"


def json_response(data: dict[str, int]) -> Response:
    """Return ``data`` as a JSON answer."""
    return Response(200, {"Content-Type": "application/json"}, json.dumps(data).encode())


def stats(site: Site, request: Request) -> Response:
    """Return the site's counters, leaving out the benchmark's own requests."""
    counters = site.counters
    requests = sum(n for path, n in counters.requests.items() if not path.startswith(STATS_PREFIX))
    return json_response({"requests": requests, "max_in_flight": counters.max_in_flight})


def reset(site: Site, request: Request) -> Response:
    """Forget the counts so far (not the requests in flight, such as this one)."""
    counters = site.counters
    counters.requests.clear()
    counters.max_in_flight = counters.in_flight - 1  # Less this request itself.
    return json_response({})


def response_cache() -> Callable[..., Awaitable[web.StreamResponse]]:
    """Return a middleware that answers each URL from memory after its first request.

    The site generates every page from its number, the same on every
    request, so the answers do not change; caching them keeps the server
    from being the bottleneck of the crawlers it serves.
    """
    store: dict[tuple[str, str], tuple[int, dict[str, str], bytes]] = {}

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path.startswith(STATS_PREFIX):
            return await handler(request)  # The counters change: never cached.
        key = (request.host, request.raw_path)  # The home page names its host.
        if key not in store:
            try:
                answer = await handler(request)
            except web.HTTPException as error:  # Redirects and 404s are raised.
                answer = error
            if not isinstance(answer, web.Response) or not isinstance(answer.body, bytes):
                return answer
            headers = {k: v for k, v in answer.headers.items() if k.lower() != "content-length"}
            store[key] = (answer.status, headers, bytes(answer.body))
        status, headers, body = store[key]
        return web.Response(status=status, headers=headers, body=body)

    return middleware


def add_bench_routes(site: Site) -> Site:
    """Add the benchmark's two routes to ``site`` and return it."""
    site.routes += [exact(STATS_PREFIX + "stats", stats), exact(STATS_PREFIX + "reset", reset)]
    return site


def make_bench_app(pages: int, latency: float, cache: bool) -> web.Application:
    """Return the test site with the benchmark's two routes, optionally cached."""
    app = make_app(pages, latency)
    if cache:
        app.middlewares.append(response_cache())  # Inside the latency middleware.
    add_bench_routes(app[SITE])
    return app


async def serve(pages: int, latency: float, cache: bool, host: str = "127.0.0.1") -> None:
    """Serve the site until standard input closes."""
    app = make_bench_app(pages, latency, cache)
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.5)
    await runner.setup()
    # A backlog as long as the system allows: the C10K crawls connect all at once.
    await web.TCPSite(runner, host, 0, backlog=65535).start()
    print("PORT", runner.addresses[0][1], flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # Until the parent closes it.
    await runner.cleanup()


def serve_generators(pages: int, latency: float, idle_timeout: float, step: bool) -> None:
    """Serve the site with stage 2's HTTP server (in a thread) until standard input closes.

    ``step``: with the server chapter's step 6 instead (llhttp parses, no limits).
    """
    from stage2_generators.server.http_server import Limits, SiteServerThread, site_handler
    from stage2_generators.server.steps import llhttp

    def step_handler(site: Site, limits: Limits) -> Any:
        def client_connected(reader: Any, writer: Any) -> Generator[Any, Any, None]:
            with contextlib.suppress(ConnectionError):  # wrk resets at the end.
                yield from llhttp.handle(site, writer.get_extra_info("socket"))

        return client_connected

    site = add_bench_routes(Site(pages, latency))
    limits = Limits(idle_timeout=idle_timeout)
    handler = step_handler if step else site_handler
    with SiteServerThread(site, limits=limits, handler=handler) as server:
        print("PORT", server.port, flush=True)
        sys.stdin.read()  # Until the parent closes it.


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m shared.bench.serve")
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--uvloop", action="store_true", help="serve on uvloop")
    parser.add_argument("--cache", action="store_true", help="answer repeated URLs from memory")
    parser.add_argument(
        "--server", choices=["aiohttp", "generators", "llhttp"], default="aiohttp",
        help="aiohttp.web, stage 2's HTTP server, or its chapter's step 6 on llhttp "
        "(no --cache, no --uvloop for the last two)",
    )  # fmt: skip
    parser.add_argument("--idle-timeout", type=float, default=60.0,
                        help="seconds stage 2's server keeps a silent connection")  # fmt: skip
    args = parser.parse_args(argv)
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # For 10 000 idle connections.
    if args.server in ("generators", "llhttp"):
        serve_generators(
            args.pages, args.latency_ms / 1000, args.idle_timeout, args.server == "llhttp"
        )
        return
    if args.uvloop:
        import uvloop

        uvloop.install()
    asyncio.run(serve(args.pages, args.latency_ms / 1000, args.cache))


if __name__ == "__main__":
    main()
