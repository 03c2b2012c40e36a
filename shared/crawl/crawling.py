"""What every stage's Crawler shares: its options, the URL policy and the
bookkeeping of a response once it has arrived.

The three stages differ only in how they wait for the network.  What they do
with a response (record it, follow a redirect, queue the page's new links)
is the same in all of them, so it is written once, here.  A stage's Crawler
subclasses ``CrawlerBase`` and supplies ``add_url`` (how a URL enters its
queue) and the code that fetches, which is the lesson of that stage.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import re
import socket
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from shared.crawl.options import OPTION_NAMES, CrawlOptions
from shared.crawl.polite import Politeness, RobotsRules, origin_of
from shared.record.stats import (
    CrawlLimitReached,
    FetchStatistic,
    ResponseTooLarge,
    RobotsDisallowed,
    Skipped,
    failure,
    redirect,
    skipped,
)
from shared.record.trace import NO_TRACE, Trace
from shared.web.encoding import decode_body, find_encoding
from shared.web.http import Response, parse_content_type
from shared.web.links import extract_links
from shared.web.recrawl import conditional_headers, read_since
from shared.web.retry import backoff
from shared.web.sitemaps import MAX_SITEMAPS, BadSitemap, read_sitemap
from shared.web.urls import CRAWLABLE_SCHEMES, UrlPolicy, normalize_url, url_host

REDIRECT_STATUSES = frozenset({300, 301, 302, 303, 307, 308})
NOT_MODIFIED = 304  # The answer to a recrawl's conditional request for an unchanged page.
LINK_MEDIA_TYPES = frozenset({"text/html", "application/xhtml+xml", "application/xml"})
HTML_MEDIA_TYPES = frozenset({"text/html", "application/xhtml+xml"})
ESCAPED_BYTE = re.compile("[\udc80-\udcff]")  # What surrogateescape makes of a non-UTF-8 byte.


class BadRedirect(Exception):
    """A redirect whose Location header is not a usable URL."""


class CrawlerBase(CrawlOptions):
    """Options, policy and records of one crawl; a stage adds the fetching.

    The options (``max_tasks`` and the others) are the fields of
    ``CrawlOptions``, which gives their defaults and checks them: it raises
    ValueError for an option out of range or an invalid ``exclude`` regular
    expression, and TypeError for an unknown option.
    """

    logger = logging.getLogger("shared")  # Each stage names its own logger.

    def __init__(self, roots: str | Iterable[str], **options: Any) -> None:
        super().__init__(**options)
        self.roots = [roots] if isinstance(roots, str) else list(roots)
        self.policy = UrlPolicy(self.roots, exclude=self.exclude, strict=self.strict)
        # What the crawl knows about each host: robots.txt rules, last request.
        self.polite = Politeness(
            obey_robots=self.obey_robots,
            delay=self.delay,
            user_agent=self.user_agent,
            read_robots=self.sitemaps,  # Its Sitemap: lines are wanted.
        )
        # The allowed links of each page, for the --json file (and a recrawl).
        self.page_links: dict[str, tuple[str, ...]] = {}
        # A recrawl's pages of the earlier crawl, by URL (crawl --since).
        self.earlier = read_since(self.since) if self.since is not None else {}
        self.sitemap_urls: set[str] = set()  # URLs to read as sitemaps, not pages.
        self.root_origins: set[str] = set()  # Whose robots.txt names sitemaps.
        self.pages_fetched = 0  # URLs admitted for fetching, for max_pages.
        self.depths: dict[str, int] = {}  # Links from a root, when max_depth is set.
        self.seen_urls: set[str] = set()
        self.done: list[FetchStatistic] = []
        self.in_flight = 0  # Requests under way; for the progress display.
        # Waits that 429 and 503 answers asked for, by kind (see shared.web.retry).
        self.waits: Counter[str] = Counter()
        # Why a URL's last answer was kept instead of tried again, when worth recording.
        self.kept_answers: dict[str, Exception] = {}
        # Called with the URL and body of each complete HTML page (crawl --save).
        self.on_page: Callable[[str, bytes], None] | None = None
        # Called with the URL and the loop's clock as each request starts
        # (robots.txt included): the tests measure the delay with it.
        self.on_request: Callable[[str, float], None] | None = None
        self.t0 = time.time()
        self.t1: float | None = None
        # What the crawl did and when, for trace=FILE (shared/record/trace.py).
        self.recorder = Trace(self.logger.name, self.queued) if self.trace else NO_TRACE
        # Where the crawl runs: None for real sockets and real time, or a
        # simulated world (shared/sim), set by simulate().  Stages 1 and 2
        # make their sockets with make_socket.
        self.world: Any = None  # A shared.sim.World (a layer above this one).
        self.make_socket: Callable[..., Any] = socket.socket
        self.jitter: random.Random | None = None  # A backoff's; None: the random module's.
        # The wall clock a Retry-After date is read on: the world's in a simulation.
        self.wall_clock: Callable[[], float] = time.time

    def __setattr__(self, name: str, value: Any) -> None:
        """Set an attribute; raises dataclasses.FrozenInstanceError for an option."""
        # The options stay frozen, as on CrawlOptions.  The dataclass's own
        # check compares the name with each option's in turn, and a crawl
        # changes a counter or two for every request: one set lookup does
        # the same check at a third of the instructions.
        if name in OPTION_NAMES:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        object.__setattr__(self, name, value)

    def simulate(self, world: Any) -> None:
        """Crawl in ``world``: its network, its virtual clock, its seed (see shared/sim)."""
        self.world = world
        self.make_socket = world.socket
        self.jitter = random.Random(f"jitter {world.seed}")  # Seeded too: the same run.
        self.wall_clock = world.wall_time
        self.recorder.use_clock(world.time)

    def queued(self) -> int:
        """Return how many URLs are seen but neither done nor in flight."""
        return len(self.seen_urls) - len(self.done) - self.in_flight

    def save_trace(self) -> None:
        """Write the trace to the file of the ``trace`` option, if there is one."""
        if self.trace:
            self.recorder.write(self.trace)

    def stopped(self) -> None:
        """Note when the crawl stopped, if it did not, and write its trace.

        Each stage's ``run`` calls it last, however the crawl ended
        (finished, failed or interrupted by Ctrl-C).
        """
        self.t1 = self.t1 or time.time()
        self.save_trace()

    def url_allowed(self, url: str) -> bool:
        """Tell whether the crawl may fetch ``url`` (scheme, host, exclude)."""
        return self.policy.url_allowed(url)

    def add_url(self, url: str, max_redirect: int | None = None) -> None:
        """Mark ``url`` seen and queue it; each stage has its own queue."""
        raise NotImplementedError

    def seen(self, url: str, max_redirect: int | None = None) -> tuple[str, int]:
        """Mark ``url`` seen; return the job to queue: it, with its redirect budget."""
        if max_redirect is None:
            max_redirect = self.max_redirect
        self.logger.debug("adding %s %d", url, max_redirect)
        self.seen_urls.add(url)
        return url, max_redirect

    def add_roots(self) -> None:
        """Queue each root; record a failure for a root that is not a web URL."""
        for root in self.roots:
            problem: ValueError | None
            try:
                url = normalize_url(root)
            except ValueError as error:
                url, problem = root, error
            else:
                problem = None
                if url.partition(":")[0] not in CRAWLABLE_SCHEMES or not url_host(url):
                    problem = ValueError(f"not an http or https URL: {root!r}")
            if url in self.seen_urls:
                continue
            if problem is None:
                self.root_origins.add(origin_of(url))
                self.add_url(url)
            else:
                self.logger.error("cannot crawl root %r: %s", root, problem)
                self.seen_urls.add(url)
                self.record_statistic(failure(url, problem))

    def record_statistic(self, fetch_statistic: FetchStatistic) -> None:
        """Record the outcome of one URL."""
        self.done.append(fetch_statistic)

    # --8<-- [start:admit]
    def limit_reached(self, url: str) -> CrawlLimitReached | None:
        """Return why ``url`` is past max_depth or max_pages, or None."""
        if self.max_depth is not None and self.depths.get(url, 0) > self.max_depth:
            return CrawlLimitReached(f"deeper than max_depth={self.max_depth}")
        if self.max_pages is not None and self.pages_fetched >= self.max_pages:
            return CrawlLimitReached(f"max_pages={self.max_pages} reached")
        return None

    def robots_needed(self, url: str) -> bool:
        """Tell whether ``url``'s robots.txt must be fetched before deciding on it."""
        return self.polite.host(url).rules is None and self.limit_reached(url) is None

    def admit(self, url: str) -> Skipped | None:
        """Count ``url`` as a page to fetch now, or return why it is skipped.

        The host's robots.txt rules must be known (see ``robots_needed``).
        """
        reason = self.limit_reached(url) or self.polite.refusal(url)
        if reason is None:
            self.pages_fetched += 1
        return reason

    def record_skip(self, url: str, reason: Skipped) -> None:
        """Record a URL that is not fetched: not a failure, and not lost.

        A host whose name does not resolve is the exception: its pages could
        not have been fetched, robots.txt or not, so each is a failure.
        """
        rules = self.polite.host(url).rules
        if isinstance(reason, RobotsDisallowed) and rules and rules.name_error:
            self.record_statistic(failure(url, rules.name_error))
            return
        self.logger.info("skipping %s: %s", url, reason)
        self.record_statistic(skipped(url, reason))

    # --8<-- [end:admit]

    def note_depth(self, url: str, parent: str, hops: int) -> None:
        """Remember that ``url`` is ``hops`` links past ``parent`` (if max_depth is set)."""
        if self.max_depth is not None:
            self.depths[url] = self.depths.get(parent, 0) + hops

    def turn(self, url: str, now: float) -> float:
        """Return how long a request to ``url`` must still wait; at 0 it starts ``now``.

        ``now`` is the loop's clock.  A stage waits that long and asks again.
        """
        wait = self.polite.wait_before(url, now)
        if wait <= 0 and self.on_request is not None:
            self.on_request(url, now)
        return wait

    # --8<-- [start:come_back]
    def come_back(self, url: str, response: Response, attempt: int, now: float) -> bool:
        """Return True to try ``url`` again after a 429 or 503 answer.

        The host is held (``Politeness.hold``) for as long as the server
        asked, or for an exponential backoff; the stage's usual wait for its
        turn then does the waiting.  ``attempt`` counts from 0; ``now`` is
        the loop's clock.
        """
        limits = (self.max_tries, self.max_retry_after)
        decision = backoff(response, attempt, *limits, self.wall_clock(), self.jitter)
        if decision is None or decision.seconds is None:
            if decision is not None and decision.problem is not None:
                self.logger.warning("not waiting: %s", decision.problem)
                self.kept_answers[url] = decision.problem  # For parse_links.
            return False
        if decision.kind == "bad_retry_after":
            value = header_text(response.headers.get("retry-after", ""))
            self.logger.warning("unreadable Retry-After %r: %s", value, url)
        self.logger.info(
            "try %d for %s: %d, again in %.3f s",
            *(attempt, url, response.status, decision.seconds),
        )
        self.waits[decision.kind] += 1
        self.polite.hold(url, now + decision.seconds)
        return True

    # --8<-- [end:come_back]

    # --8<-- [start:handle_response]
    def handle_response(self, url: str, max_redirect: int, response: Response) -> None:
        """Record a response, then follow its redirect or queue its new links."""
        if response.status in REDIRECT_STATUSES and "location" in response.headers:
            self.follow_redirect(url, max_redirect, response)
            return
        if url in self.sitemap_urls:
            self.handle_sitemap(url, response)
            return
        if response.status == NOT_MODIFIED and url in self.earlier:
            self.handle_not_modified(url, response)
            return
        self.recorder.phase(url, "parse")
        stat, links = self.parse_links(url, response)
        complete_html = stat.exception is None and stat.content_type in HTML_MEDIA_TYPES
        if self.on_page is not None and stat.status == 200 and complete_html:
            self.on_page(url, response.body)  # Before recording: a crash records it once.
        if links:  # Before the record: a stream of records writes them with it.
            self.page_links[url] = tuple(sorted(links))  # For the --json file, and a recrawl.
        self.record_statistic(stat)
        # Sorted: a set's order changes from one process to the next (string
        # hashing is salted), and a simulated crawl must repeat exactly.
        for link in sorted(links.difference(self.seen_urls)):
            self.note_depth(link, url, 1)
            self.add_url(link)
        self.recorder.end(url)

    def follow_redirect(self, url: str, max_redirect: int, response: Response) -> None:
        """Record a redirect and queue its target if it is new and allowed."""
        location = header_text(response.headers["location"])
        try:
            next_url = normalize_url(location, url)
        except ValueError:
            error = BadRedirect(f"invalid Location header {location!r}")
            self.record_statistic(failure(url, error)._replace(status=response.status))
            return
        self.record_statistic(redirect(url, next_url, response.status))
        if next_url in self.seen_urls:
            return
        if url in self.sitemap_urls:  # A sitemap that moved is still a sitemap.
            self.sitemap_urls.add(next_url)
        if not self.url_allowed(next_url):
            self.logger.info("not following redirect to %s from %s", next_url, url)
        elif max_redirect > 0:
            self.logger.info("redirect to %s from %s", next_url, url)
            self.note_depth(next_url, url, 0)  # A redirect is no link deeper.
            self.add_url(next_url, max_redirect - 1)
        else:
            self.logger.error("redirect limit reached for %s from %s", next_url, url)

    # --8<-- [end:handle_response]

    # --8<-- [start:parse_links]
    def parse_links(self, url: str, response: Response) -> tuple[FetchStatistic, set[str]]:
        """Return the statistic of a response and the allowed links it holds."""
        content_type = header_text(response.headers.get("content-type", ""))
        media_type, params = parse_content_type(content_type)
        is_page = media_type in LINK_MEDIA_TYPES
        encoding = find_encoding(params.get("charset"), response.body, sniff=is_page)
        size, links = len(response.body), set()
        error: Exception | None = None
        kept = self.kept_answers.pop(url, None)  # A 429 or 503 not waited for, and why.
        if response.truncated:
            error = ResponseTooLarge(f"body longer than {self.max_size} bytes, cut there")
        elif kept is not None:
            error = kept
        elif response.status == 200 and is_page:
            text = decode_body(response.body, encoding)
            found = extract_links(text, url, encoding)
            links = {link for link in found if self.policy.normal_url_allowed(link)}
            if links:
                self.logger.debug("got %d distinct urls from %s", len(links), url)
        new = len(links.difference(self.seen_urls))
        etag, last_modified = validators(response)
        stat = FetchStatistic(
            url=url,
            next_url=None,
            status=response.status,
            exception=error,
            size=size,
            content_type=media_type,
            encoding=encoding,
            num_urls=len(links),
            num_new_urls=new,
            etag=etag,
            last_modified=last_modified,
        )
        return stat, links

    # --8<-- [end:parse_links]

    # --8<-- [start:recrawl]
    def conditional_headers(self, url: str) -> dict[str, str]:
        """Return the headers a recrawl sends for ``url``: none if it is new."""
        page = self.earlier.get(url)
        if page is None or url in self.sitemap_urls:
            return {}
        return conditional_headers(page)

    def handle_not_modified(self, url: str, response: Response) -> None:
        """Record a 304 answer to a recrawl, and go on with the earlier links."""
        page = self.earlier[url]
        links = {link for link in page.links if self.policy.normal_url_allowed(link)}
        new = links.difference(self.seen_urls)
        stat = FetchStatistic(
            url=url,
            next_url=None,
            status=304,
            exception=None,
            size=0,
            content_type=page.content_type,
            encoding=page.encoding,
            num_urls=len(links),
            num_new_urls=len(new),
        )
        # A 304 may send fresh validators; the earlier ones hold otherwise.
        etag, last_modified = validators(response)
        etag, last_modified = etag or page.etag, last_modified or page.last_modified
        if links:  # Before the record, as in handle_response.
            self.page_links[url] = tuple(sorted(links))
        self.record_statistic(stat._replace(etag=etag, last_modified=last_modified))
        for link in sorted(new):  # Sorted, as in handle_response.
            self.note_depth(link, url, 1)
            self.add_url(link)

    # --8<-- [end:recrawl]

    # --8<-- [start:sitemaps]
    def rules_known(self, origin: str, rules: RobotsRules) -> None:
        """Keep a host's robots.txt rules; for a root host, queue its sitemaps."""
        self.polite.host(origin).rules = rules
        if self.sitemaps and origin in self.root_origins:
            self.root_origins.discard(origin)  # Once per host.
            robots_url = origin + "/robots.txt"
            for location in rules.sitemaps() or [origin + "/sitemap.xml"]:
                self.add_sitemap(location, robots_url)

    def add_sitemap(self, location: str, base: str) -> None:
        """Queue the sitemap at ``location`` if the crawl allows it, up to MAX_SITEMAPS."""
        try:
            url = normalize_url(location, base)
        except ValueError:
            self.logger.warning("bad sitemap URL %r in %s", location, base)
            return
        if url in self.seen_urls or not self.policy.normal_url_allowed(url):
            return
        if len(self.sitemap_urls) >= MAX_SITEMAPS:
            self.logger.warning("more than %d sitemaps: not reading %s", MAX_SITEMAPS, url)
            return
        self.sitemap_urls.add(url)
        self.add_url(url)

    def handle_sitemap(self, url: str, response: Response) -> None:
        """Record a sitemap's answer, then queue the sitemaps or pages it lists."""
        media_type = parse_content_type(response.headers.get("content-type"))[0]
        stat = FetchStatistic(
            url=url,
            next_url=None,
            status=response.status,
            exception=None,
            size=len(response.body),
            content_type=media_type,
            encoding=None,
            num_urls=0,
            num_new_urls=0,
        )
        index, listed = False, list[str]()
        try:
            if response.truncated:
                raise ResponseTooLarge(f"body longer than {self.max_size} bytes, cut there")
            if response.status == 200:
                index, listed = read_sitemap(response.body, url, media_type, self.max_size)
        except (BadSitemap, ResponseTooLarge) as error:
            self.logger.warning("cannot read sitemap %s: %s", url, error)
            stat = stat._replace(exception=error)
        links = self.allowed_links(listed, url)
        new = links.difference(self.seen_urls)
        self.record_statistic(stat._replace(num_urls=len(links), num_new_urls=len(new)))
        for link in sorted(new):
            if index:
                self.add_sitemap(link, url)
            else:
                self.add_url(link)  # As deep as a root: a sitemap lists it.

    def allowed_links(self, locations: Iterable[str], base: str) -> set[str]:
        """Return the normalized URLs of ``locations`` that the crawl allows."""
        links = set()
        for location in locations:
            try:
                link = normalize_url(location, base)
            except ValueError:
                continue
            if self.policy.normal_url_allowed(link):
                links.add(link)
        return links

    # --8<-- [end:sitemaps]

    def record_crash(self, url: str, error: Exception) -> None:
        """Record a URL whose fetch failed through a bug, so it is not lost."""
        self.logger.exception("fetching %s failed unexpectedly", url)
        self.record_statistic(failure(url, error))


def validators(response: Response) -> tuple[str | None, str | None]:
    """Return a response's ETag and Last-Modified, each None when not sent."""
    etag, modified = response.headers.get("etag"), response.headers.get("last-modified")
    return (
        None if etag is None else header_text(etag),
        None if modified is None else header_text(modified),
    )


def header_text(value: str) -> str:
    """Return a header value with each byte that was not UTF-8 written as ``%XX``.

    Header values arrive decoded from UTF-8 with ``surrogateescape`` (by
    aiohttp and by shared.web.http alike), so a stray latin-1 byte is a lone
    surrogate, which no report or JSON file could print.  ``%XX`` keeps the
    byte, and is what a URL needs anyway.
    """
    if value.isascii():
        return value  # Nothing escaped: the usual header, at a sixth of the cost.
    return ESCAPED_BYTE.sub(lambda match: f"%{ord(match.group()) - 0xDC00:02X}", value)
