"""Politeness: what a crawl owes the sites it visits, decided once for all stages.

A crawler pointed at someone else's server should read the site's
``robots.txt`` and obey it, leave a delay between two requests to one host
and keep only a few requests in flight there.  Everything that is a decision
lives here, free of any I/O, so the three stages decide alike: the rules of
one robots.txt (``RobotsRules``), how the answers to a robots.txt request
become rules (``RobotsFetch``), and when a host may get its next request
(``Politeness.wait_before``), including a wait a server asked for
(``Politeness.hold``, see ``shared.web.retry``).  How a stage *waits* for that moment is the lesson
of the stage and stays there: a timer and a waiting list per host in stage 1,
a sleep and a semaphore per host in stages 2 and 3.

The robots.txt rules follow RFC 9309 and what Google documents: a 2xx answer
is parsed (by Protego, the parser Scrapy uses), only its first 500 KiB; a 4xx
answer means no rules, so everything is allowed; a 5xx answer (or 429, "too
many requests") or no answer at all means the site is not ready for
crawlers, so nothing is allowed for the rest of the crawl; up to five
redirects are followed.  Left out compared with a production crawler:
fetching robots.txt again after a day, ``Request-rate`` and ``Visit-time``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import socket
import urllib.parse

from protego import Protego

from shared.record.stats import RobotsDisallowed
from shared.web.http import USER_AGENT, Response
from shared.web.urls import CRAWLABLE_SCHEMES, before_path, normalize_url

MAX_ROBOTS_SIZE = 500 * 1024  # Google reads this much of a robots.txt and ignores the rest.
MAX_ROBOTS_REDIRECTS = 5  # RFC 9309: follow at least five; past that, there are no rules.
# A Crawl-delay longer than this is taken as this: a robots.txt that asks for
# a day between requests would otherwise hold the crawl for a day.
MAX_CRAWL_DELAY = 60.0
REDIRECT_STATUSES = frozenset({300, 301, 302, 303, 307, 308})


def origin_of(url: str) -> str:
    """Return the ``scheme://host[:port]`` a normalized URL belongs to."""
    # Every request asks this several times (its host's rules, delay and
    # slot): the part before the path is cut with two finds and read once
    # per host, at a third of the instructions of reading the whole URL.
    return _origin(before_path(url))


@functools.lru_cache(maxsize=256)
def _origin(start: str) -> str:
    """Return the origin of a URL made of ``start``, then its path (if any)."""
    # In a normalized http(s) URL the authority runs from '://' to the '/'
    # that starts the path, and its string methods read it.
    scheme, separator, authority = start.partition("://")
    if scheme in CRAWLABLE_SCHEMES and separator and _plain_authority(authority):
        return f"{scheme}://{authority.rpartition('@')[2]}"
    parts = urllib.parse.urlsplit(start)  # Anything else: the general parser.
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"


def _plain_authority(authority: str) -> bool:
    """Tell whether ``authority`` holds nothing that ``urlsplit`` would end or strip it at."""
    return "?" not in authority and "#" not in authority and authority.isprintable()


def is_name_error(error: BaseException | None) -> bool:
    """Tell whether ``error`` (or an error it was raised from) is a failed lookup.

    Stages 1 and 2 raise ``socket.gaierror`` itself; aiohttp raises its own
    error from it, so the cause is where the lookup shows.
    """
    seen = 0
    while error is not None and seen < 10:  # A cycle of causes cannot hang this.
        if isinstance(error, socket.gaierror):
            return True
        error, seen = error.__cause__ or error.__context__, seen + 1
    return False


# --8<-- [start:rules]
class RobotsRules:
    """What one site's robots.txt allows a user agent; ``refusal`` is why not."""

    def __init__(self, parser: Protego | None, user_agent: str, everything: bool) -> None:
        self.parser = parser  # None: no rules were read; ``everything`` decides.
        self.user_agent = user_agent
        self.everything = everything
        self.refusal = "disallowed by robots.txt"
        # The lookup error, when the host's name did not resolve: then no page
        # of the host could be fetched at all, and each is a failure, not a skip.
        self.name_error: BaseException | None = None

    @classmethod
    def allow_all(cls, user_agent: str = USER_AGENT) -> RobotsRules:
        """Return rules that allow every URL (no robots.txt, or robots are ignored)."""
        return cls(None, user_agent, everything=True)

    @classmethod
    def disallow_all(cls, refusal: str, user_agent: str = USER_AGENT) -> RobotsRules:
        """Return rules that allow no URL, saying ``refusal`` for each."""
        rules = cls(None, user_agent, everything=False)
        rules.refusal = refusal
        return rules

    @classmethod
    def parse(cls, body: bytes, user_agent: str = USER_AGENT) -> RobotsRules:
        """Return the rules of a robots.txt body: its first 500 KiB, lines whole."""
        if len(body) > MAX_ROBOTS_SIZE:
            body = body[:MAX_ROBOTS_SIZE]
            body = body[: body.rfind(b"\n") + 1]  # A rule cut in two is no rule.
        text = body.decode("utf-8", errors="replace").removeprefix("\ufeff")
        return cls(Protego.parse(text), user_agent, everything=True)

    def allowed(self, url: str) -> bool:
        """Tell whether the rules let the user agent fetch ``url``."""
        if self.parser is None:
            return self.everything
        return self.parser.can_fetch(url, self.user_agent)

    def sitemaps(self) -> list[str]:
        """Return the ``Sitemap:`` URLs of the robots.txt, as written."""
        return list(self.parser.sitemaps) if self.parser else []

    def crawl_delay(self) -> float:
        """Return the Crawl-delay asked of the user agent (0 if none), at most 60 s."""
        delay = self.parser.crawl_delay(self.user_agent) if self.parser else None
        if delay is None or not math.isfinite(delay) or delay <= 0:
            return 0.0
        return min(delay, MAX_CRAWL_DELAY)


# --8<-- [end:rules]


# --8<-- [start:robots_fetch]
class RobotsFetch:
    """Turn the answers to one host's robots.txt request into its rules.

    A stage fetches ``url`` (retrying network failures as for any URL) and
    hands the outcome to ``received`` or ``failed``.  While ``rules`` is
    None, a redirect was followed: fetch the new ``url`` and hand that over.
    """

    def __init__(self, origin: str, user_agent: str = USER_AGENT) -> None:
        self.origin = origin
        self.url = origin + "/robots.txt"
        self.user_agent = user_agent
        self.redirects = 0
        self.rules: RobotsRules | None = None

    def received(self, response: Response) -> None:
        """Take one answer: a redirect to follow, or what settles the rules."""
        status, agent = response.status, self.user_agent
        if status in REDIRECT_STATUSES and "location" in response.headers:
            self.follow(response.headers["location"])
        elif 200 <= status < 300:
            self.rules = RobotsRules.parse(response.body, agent)
        elif status == 429 or status >= 500:  # The site is not ready for crawlers.
            self.rules = RobotsRules.disallow_all(f"robots.txt answered {status}", agent)
        else:  # 4xx, or nothing a robots.txt can be read from: no rules.
            self.rules = RobotsRules.allow_all(agent)

    def failed(self, error: BaseException) -> None:
        """Take a robots.txt that could not be fetched: nothing is allowed."""
        refusal = f"robots.txt unreachable ({type(error).__name__}: {error})"
        self.rules = RobotsRules.disallow_all(refusal, self.user_agent)
        if is_name_error(error):
            self.rules.name_error = error

    def follow(self, location: str) -> None:
        """Go on to a redirect's target; past five redirects, or nowhere, no rules."""
        try:
            target = normalize_url(urllib.parse.urljoin(self.url, location))
        except ValueError:
            target = ""
        scheme = urllib.parse.urlsplit(target).scheme
        if self.redirects >= MAX_ROBOTS_REDIRECTS or scheme not in CRAWLABLE_SCHEMES:
            self.rules = RobotsRules.allow_all(self.user_agent)
        else:
            self.redirects += 1
            self.url = target


# --8<-- [end:robots_fetch]


@dataclasses.dataclass
class Host:
    """What the crawl knows about one origin: its rules and its last request."""

    origin: str
    rules: RobotsRules | None = None  # None until its robots.txt is known.
    last_start: float = -math.inf  # Loop time the latest request started.
    requests: int = 0  # Requests started, robots.txt included.
    not_before: float = -math.inf  # Loop time a Retry-After or backoff holds it until.


# --8<-- [start:politeness]
class Politeness:
    """What one crawl knows about each host, and the politeness options it needs.

    The options are checked by ``shared.crawl.options``; ``max_per_host`` is kept
    by each stage with its own waiting primitive.
    """

    def __init__(
        self,
        *,
        obey_robots: bool = False,
        delay: float = 0.0,
        user_agent: str = USER_AGENT,
        read_robots: bool = False,
    ) -> None:
        self.obey_robots = obey_robots
        # Fetch each robots.txt even when not obeying it (for its Sitemap: lines).
        self.read_robots = obey_robots or read_robots
        self.delay = delay
        self.user_agent = user_agent
        self.hosts: dict[str, Host] = {}

    def host(self, url: str) -> Host:
        """Return the record of ``url``'s host, made on first use."""
        origin = origin_of(url)
        host = self.hosts.get(origin)
        if host is None:
            rules = None if self.read_robots else RobotsRules.allow_all(self.user_agent)
            host = self.hosts[origin] = Host(origin, rules)
        return host

    def refusal(self, url: str) -> RobotsDisallowed | None:
        """Return why robots.txt forbids ``url``, or None; its rules must be known."""
        if not self.obey_robots:
            return None  # Rules read only for their Sitemap: lines refuse nothing.
        rules = self.host(url).rules
        assert rules is not None, "fetch the host's robots.txt first"
        return None if rules.allowed(url) else RobotsDisallowed(rules.refusal)

    def delay_of(self, host: Host) -> float:
        """Return the seconds between two requests to ``host``: --delay or Crawl-delay."""
        crawl_delay = host.rules.crawl_delay() if host.rules and self.obey_robots else 0.0
        return max(self.delay, crawl_delay)

    def wait_before(self, url: str, now: float) -> float:
        """Return how long a request to ``url`` must still wait, or 0 to start it.

        ``now`` is the loop's clock.  At 0 the request is counted as started
        at ``now``; a stage that had to wait asks again once it has, since
        another request to the host may have started meanwhile.
        """
        host = self.host(url)
        wait = max(host.last_start + self.delay_of(host), host.not_before) - now
        if wait > 0:
            return wait
        host.last_start = now
        host.requests += 1
        return 0.0

    def hold(self, url: str, until: float) -> None:
        """Keep every request to ``url``'s host back until loop time ``until``.

        A 429 or 503 answer asks this of the whole host (``shared.web.retry``).
        """
        host = self.host(url)
        host.not_before = max(host.not_before, until)


# --8<-- [end:politeness]
