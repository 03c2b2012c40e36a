"""Coming back politely: the part of the acceptance suite about a second visit.

``RevisitTests`` is a mixin of ``tests.acceptance.AcceptanceTests``, so every
stage runs it.  What it checks, the same in every stage:

- A 429 or 503 answer with ``Retry-After`` (seconds, or an HTTP date) is
  tried again once that time has passed, and every other request to the
  host waits too; a wait over ``max_retry_after`` is not made: the answer
  is recorded with a ``RetryAfterTooLong``.  Without a Retry-After, or with
  one that cannot be read, the wait is an exponential backoff.  The times
  are the stage's own loop clock (``Crawler.on_request``), never a timer of
  the test's.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import time
import types
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web

from shared.report import report
from shared.retry import BACKOFF_BASE, RetryAfterTooLong
from tests import acceptance  # A cycle: acceptance.py imports this module first.
from tests.servers import DEADLINE, PageServer

SLOW = pytest.mark.slow  # As in tests.acceptance: over a second.
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def busy_then_ok(answers: list[dict[str, str] | None], status: int = 503) -> Handler:
    """Return a handler that answers ``status`` with each header set given, then 200.

    None in ``answers`` stands for no Retry-After at all.
    """
    calls = 0

    async def handler(request: web.Request) -> web.StreamResponse:
        nonlocal calls
        calls += 1
        if calls <= len(answers):
            return web.Response(status=status, headers=answers[calls - 1] or {}, text="busy")
        return web.Response(text="<p>ok</p>", content_type="text/html")

    return handler


def retry_after(value: str) -> dict[str, str]:
    """Return the headers of an answer that asks to come back after ``value``."""
    return {"Retry-After": value}


class RevisitTests:
    """Retry-After and backoff; mixed into AcceptanceTests."""

    stage: types.ModuleType
    crawl: Any  # AcceptanceTests.crawl: a crawl under a deadline.

    def crawl_clocked(self, roots: list[str], **options: Any) -> tuple[Any, dict[str, list[float]]]:
        """Crawl, and return the crawler and the loop times each URL was requested at."""
        crawler = self.stage.Crawler(roots, **options)
        times: dict[str, list[float]] = {}
        crawler.on_request = lambda url, now: times.setdefault(url, []).append(now)
        acceptance.run_with_deadline(lambda: self.stage.run(crawler))
        return crawler, times

    # --- Retry-After ----------------------------------------------------------------

    @SLOW
    def test_retry_after_seconds_holds_the_whole_host(self, pages: PageServer) -> None:
        crawler: Any = None

        async def after_the_hold(request: web.Request) -> web.StreamResponse:
            # Answer only once the crawler has taken /a's Retry-After, so
            # that /c (queued behind this page) starts after it for sure.
            deadline = asyncio.get_running_loop().time() + DEADLINE
            while not any(h.not_before > -math.inf for h in list(crawler.polite.hosts.values())):
                if asyncio.get_running_loop().time() > deadline:
                    break
                await asyncio.sleep(0.005)
            return web.Response(text="")

        a = pages.add_handler("/a", busy_then_ok([retry_after("1")], status=429))
        b = pages.add_handler("/b", after_the_hold)
        c = pages.add_page("/c", [])
        crawler = self.stage.Crawler([a, b, c], max_tasks=2)
        times: dict[str, list[float]] = {}
        crawler.on_request = lambda url, now: times.setdefault(url, []).append(now)
        acceptance.run_with_deadline(lambda: self.stage.run(crawler))
        (held_until,) = {host.not_before for host in crawler.polite.hosts.values()}
        assert len(times[a]) == 2 and times[a][1] - times[a][0] >= 1.0
        assert times[a][1] >= held_until and times[c][0] >= held_until  # The host waited.
        assert [stat.status for stat in crawler.done if stat.url == a] == [200]
        assert crawler.waits == {"retry_after": 1}

    @SLOW
    def test_retry_after_date_is_waited_for(self, pages: PageServer) -> None:
        async def dated(request: web.Request) -> web.StreamResponse:
            if pages.requests["/"] == 1:
                later = email.utils.formatdate(time.time() + 2, usegmt=True)
                return web.Response(status=503, headers=retry_after(later))
            return web.Response(text="")

        root = pages.add_handler("/", dated)
        crawler, times = self.crawl_clocked([root])
        # The date has whole seconds: 2 s ahead, written down, is more than 1 s.
        assert len(times[root]) == 2 and times[root][1] - times[root][0] >= 0.9
        assert crawler.done[0].status == 200 and crawler.waits == {"retry_after": 1}

    def test_retry_after_date_in_the_past_is_no_wait(self, pages: PageServer) -> None:
        past = email.utils.formatdate(time.time() - 3600, usegmt=True)
        root = pages.add_handler("/", busy_then_ok([retry_after(past)]))
        crawler = self.crawl([root])
        assert pages.requests["/"] == 2 and crawler.done[0].status == 200
        assert crawler.waits == {"retry_after": 1}

    @pytest.mark.parametrize("value", ["3600", "99999999999999999999999", "9" * 5000])
    def test_retry_after_over_the_cap_is_recorded_not_waited(
        self, pages: PageServer, value: str
    ) -> None:
        root = pages.add_handler("/", busy_then_ok([retry_after(value)] * 9, status=429))
        crawler = self.crawl([root])
        (stat,) = crawler.done
        assert (stat.status, type(stat.exception)) == (429, RetryAfterTooLong)
        assert "over max_retry_after=120" in str(stat.exception)
        assert pages.requests["/"] == 1 and not crawler.waits

    def test_max_retry_after_sets_the_cap(self, pages: PageServer) -> None:
        root = pages.add_handler("/", busy_then_ok([retry_after("1")] * 9))
        crawler = self.crawl([root], max_retry_after=0.5)
        assert isinstance(crawler.done[0].exception, RetryAfterTooLong)
        assert pages.requests["/"] == 1

    # --- Without a usable Retry-After: backoff ------------------------------------------

    def test_503_without_retry_after_backs_off(self, pages: PageServer) -> None:
        root = pages.add_handler("/", busy_then_ok([None, None]))
        crawler, times = self.crawl_clocked([root], max_tries=3)
        first, second, third = times[root]
        # Jitter takes at most half of each wait, and each wait doubles.
        assert second - first >= BACKOFF_BASE / 2 and third - second >= BACKOFF_BASE
        assert crawler.done[0].status == 200 and crawler.waits == {"backoff": 2}

    @pytest.mark.parametrize("value", ["-5", "soon", "1.5", "", "Tue, 99 Foo 2026 25:61:00 GMT"])
    def test_unreadable_retry_after_backs_off(self, pages: PageServer, value: str) -> None:
        root = pages.add_handler("/", busy_then_ok([retry_after(value)], status=429))
        crawler = self.crawl([root])
        assert pages.requests["/"] == 2 and crawler.done[0].status == 200
        assert crawler.waits == {"bad_retry_after": 1}

    def test_busy_answer_is_kept_once_max_tries_are_spent(self, pages: PageServer) -> None:
        root = pages.add_handler("/", busy_then_ok([retry_after("0")] * 9))
        crawler = self.crawl([root], max_tries=2)
        (stat,) = crawler.done
        assert (stat.status, stat.exception) == (503, None)
        assert pages.requests["/"] == 2 and crawler.waits == {"retry_after": 1}

    def test_other_statuses_with_retry_after_are_not_retried(self, pages: PageServer) -> None:
        root = pages.add_handler("/", busy_then_ok([retry_after("0")], status=500))
        crawler = self.crawl([root])
        assert crawler.done[0].status == 500 and pages.requests["/"] == 1

    def test_the_report_counts_the_waits(self, pages: PageServer, capsys: Any) -> None:
        root = pages.add_page("/", ["/a", "/b"])
        pages.add_handler("/a", busy_then_ok([retry_after("0"), None]))
        pages.add_handler("/b", busy_then_ok([retry_after("nonsense")], status=429))
        crawler = self.crawl([root])
        report(crawler)
        lines = capsys.readouterr().out.splitlines()
        assert {"1 wait_retry_after", "1 wait_backoff", "1 wait_bad_retry_after"} <= {
            line.strip() for line in lines
        }
        assert {stat.status for stat in crawler.done} == {200}
