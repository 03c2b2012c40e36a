"""A crawl with a page that never answers ends on time, with its results.

The test waits for the crawl with a deadline of its own, far longer than
the crawl's limit, so a crawl that never stops fails the test instead of
hanging it.
"""

import asyncio
from collections.abc import Iterator
from types import ModuleType

import pytest
from aiohttp import web

from tests.servers import PageServer

LIMIT = 1.0  # The crawl's time limit, in seconds.
DEADLINE = 5.0  # The test's; never reached if the crawl stops on time.


@pytest.fixture
def site() -> Iterator[PageServer]:
    """A root linking to two pages and to one that never answers."""

    async def never(request: web.Request) -> web.StreamResponse:
        await asyncio.Event().wait()  # Until the server shuts down.
        raise AssertionError("unreachable")

    with PageServer() as pages:
        pages.add_page("/", links=["/a", "/b", "/never"])
        pages.add_page("/a")
        pages.add_page("/b")
        pages.add_handler("/never", never)
        yield pages


def crawl(crawler: object) -> tuple[bool, object]:
    """Run the crawl; return whether it ended, and its result or error."""

    async def main() -> tuple[bool, object]:
        task = asyncio.create_task(crawler.crawl())  # type: ignore[attr-defined]
        done, _ = await asyncio.wait({task}, timeout=DEADLINE)
        if not done:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            return False, None
        return True, task.exception() or task.result()

    return asyncio.run(main())


def test_the_crawl_stops_on_time_with_its_results(
    site: PageServer, exercise: ModuleType
) -> None:
    root = site.url
    ended, got = crawl(exercise.Crawler(root, seconds=LIMIT))
    assert ended, (
        f"crawl(seconds={LIMIT}) had not returned {DEADLINE:.0f} s after it "
        f"started, stuck on a page that never answers: stop waiting for "
        f"q.join() when the time is up (asyncio.timeout)"
    )
    assert not isinstance(got, BaseException), (
        f"crawl() raised {got!r} when the time was up: catch it, cancel the "
        f"workers, and return the statuses of the pages that were fetched"
    )
    pages = {root: 200, root + "a": 200, root + "b": 200}
    assert got == pages, f"crawl() returned {got}, not {pages}"


def test_without_a_limit_the_crawl_ends_when_done(
    exercise: ModuleType,
) -> None:
    with PageServer() as pages:
        root = pages.add_page("/", links=["/a"])
        pages.add_page("/a")
        ended, got = crawl(exercise.Crawler(root))
    assert ended and got == {root: 200, root + "a": 200}, got
