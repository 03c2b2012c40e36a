"""A server that is busy a given number of times, then answers.

The server (the ``pages`` fixture of the repository's conftest.py)
counts the requests it gets, so the test checks how many attempts were
made, not only what came back.
"""

import asyncio
from types import ModuleType

import aiohttp
from aiohttp import web

from tests.servers import PageServer

ATTEMPTS = 3
BACKOFF = 0.01


def busy_then(pages: PageServer, busy: int, status: int = 200) -> str:
    """Serve a page busy (503) for ``busy`` requests, then ``status``."""
    seen = []

    async def handler(request: web.Request) -> web.StreamResponse:
        seen.append(request)
        return web.Response(status=503 if len(seen) <= busy else status)

    return pages.add_handler("/page", handler)


def status_of(exercise: ModuleType, url: str) -> int:
    async def main() -> int:
        async with aiohttp.ClientSession() as session:
            status: int = await exercise.fetch_status(
                session, url, ATTEMPTS, BACKOFF
            )
            return status

    return asyncio.run(main())


def test_a_503_is_tried_again(pages: PageServer, exercise: ModuleType) -> None:
    url = busy_then(pages, busy=2)
    status = status_of(exercise, url)
    made = pages.requests["/page"]
    assert status == 200, (
        f"the server was busy twice, then answered 200, but fetch_status "
        f"returned {status} after {made} request(s): after a 503, sleep "
        f"and try again, up to {ATTEMPTS} requests in all"
    )
    assert made == 3, f"{made} requests for 2 busy answers and a 200"


def test_the_attempts_are_limited(
    pages: PageServer, exercise: ModuleType
) -> None:
    url = busy_then(pages, busy=100)
    status = status_of(exercise, url)
    made = pages.requests["/page"]
    assert (status, made) == (503, ATTEMPTS), (
        f"always busy: fetch_status should make {ATTEMPTS} requests and "
        f"return 503, not make {made} and return {status}"
    )


def test_other_statuses_are_final(
    pages: PageServer, exercise: ModuleType
) -> None:
    url = busy_then(pages, busy=0, status=404)
    status = status_of(exercise, url)
    made = pages.requests["/page"]
    assert (status, made) == (404, 1), (
        f"a 404 is not a busy server: one request, and 404, not {made} "
        f"and {status}"
    )
