"""What the crawler records about each URL it fetched.

``FetchStatistic`` has the fields of the 500 Lines crawler, in its order,
then the two validators a recrawl needs (``etag``, ``last_modified``).
The helpers here build the records of a failure, a skip and a redirect the same
way for every stage.
"""

from __future__ import annotations

from typing import NamedTuple


class FetchStatistic(NamedTuple):
    """The outcome of fetching one URL."""

    url: str
    next_url: str | None  # Where a redirect points, else None.
    status: int | None  # None when every try failed.
    exception: BaseException | None  # Why it failed, or why the body was cut.
    size: int  # Body bytes read.
    content_type: str | None  # Media type without parameters.
    encoding: str | None  # The encoding the body is read with (see shared.web.encoding).
    num_urls: int  # Distinct allowed links on the page.
    num_new_urls: int  # Of those, the ones not seen before.
    # The answer's validators, sent back by a recrawl (crawl --since).
    etag: str | None = None
    last_modified: str | None = None


class ResponseTooLarge(Exception):
    """The body was longer than ``max_size`` and was cut there."""


class Skipped(Exception):
    """A URL the crawl decided not to fetch: recorded, but not a failure."""


class RobotsDisallowed(Skipped):
    """The site's robots.txt does not let the crawler fetch the URL."""


class CrawlLimitReached(Skipped):
    """The URL is past ``max_pages`` or ``max_depth``: not fetched."""


def without_body(
    url: str,
    *,
    next_url: str | None = None,
    status: int | None = None,
    exception: BaseException | None = None,
) -> FetchStatistic:
    """Return the statistic of a URL whose body was never read: no size, type or links."""
    return FetchStatistic(
        url=url,
        next_url=next_url,
        status=status,
        exception=exception,
        size=0,
        content_type=None,
        encoding=None,
        num_urls=0,
        num_new_urls=0,
    )


def failure(url: str, exception: BaseException) -> FetchStatistic:
    """Return the statistic of a URL that could not be fetched at all."""
    return without_body(url, exception=exception)


def skipped(url: str, reason: Skipped) -> FetchStatistic:
    """Return the statistic of a URL the crawl did not fetch, and why."""
    return without_body(url, exception=reason)


def redirect(url: str, next_url: str, status: int) -> FetchStatistic:
    """Return the statistic of a URL that redirected to ``next_url``."""
    return without_body(url, next_url=next_url, status=status)
