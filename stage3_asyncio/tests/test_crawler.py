"""The stage 3 crawler beyond the shared contract: what its task group adds.

The acceptance suite (test_acceptance.py) checks the contract itself.
"""

from __future__ import annotations

from typing import Any

import pytest

from stage3_asyncio.crawler import Crawler, run
from tests.acceptance import run_with_deadline
from tests.servers import PageServer


class DyingWorkerCrawler(Crawler):
    """A crawler whose bug is in recording a bug: the worker itself dies."""

    def parse_links(self, url: str, response: Any) -> Any:
        raise ZeroDivisionError("a bug in the link parser")

    def record_crash(self, url: str, error: Exception) -> None:
        raise RuntimeError("a bug in record_crash")


def test_a_worker_that_dies_of_a_bug_ends_the_crawl_with_its_error(
    pages: PageServer,
) -> None:
    # Before the task group, the dead worker's error was gathered and
    # dropped, and the crawl went on with one worker fewer (or hung in
    # join() once none was left).
    root = pages.add_page("/", ["/a"])
    with pytest.raises(ExceptionGroup) as raised:
        run_with_deadline(lambda: run(DyingWorkerCrawler([root], max_tasks=2)))
    assert raised.group_contains(RuntimeError, match="a bug in record_crash")
