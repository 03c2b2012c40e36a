"""The acceptance tests whose point is time, run in a simulated world.

Each test here crawls the test site's ``Site`` (or ``Answers``, a site of
hand-made answers, or ``Busy``, a site that turns requests away first)
served on a ``World``'s in-memory network (shared/sim), on the world's
virtual clock: a page of 200 ms, a timeout of 30 s, a delay between
requests or a Retry-After of a minute costs no real time, and every time
checked is the world's, exactly, never the machine's.

What the contract limits is measured where a server sees it: in
``world.network.heard``, the network's note of each request as its
server took it in (the ``check_*`` functions below), never through a
hook the crawler calls itself.  Three tests give races room: three small
sites at once, four roots on each, with robots.txt, a delay, a limit per
host and 503s, each checked against the oracle and against those limits;
a fourth, with fewer pages allowed than roots, counts what the servers
were asked against max_pages.

Each test takes the ``seed`` fixture: seed 0 by default, and every seed of
``pytest --seeds N`` (tests/seeds.py), which ends with the first seed that
failed and the command that replays it.  The seed orders what happens at
once, draws each request's latency within ``JITTER`` of ``LATENCY``, and
lets the loop hear of an arrival a little late (never past a timer).

What only real sockets show (bytes on a real wire, TLS, descriptors
closed, what a hostile server does on a kept connection) stays in the
other mixins.  The hostile servers whose behaviour is a script of bytes
and pauses run in a world too, in tests/hostile_acceptance.py.
A crawler is simulated through ``Crawler.simulate(world)`` before its
stage's ``run``: see docs/contract.md#simulation.
"""

from __future__ import annotations

import email.utils
import itertools
import types
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from shared.record.stats import Skipped
from shared.sim import SILENCE, Conditions, Scripted, World
from shared.sim.network import Heard
from shared.testsite.site import Request, Response, Site, SiteCounters, expected_results
from shared.web.retry import BACKOFF_BASE
from tests import (
    acceptance,  # A cycle: acceptance.py imports this module first.
    polite_acceptance,
)
from tests.grading import level
from tests.polite_acceptance import check_each_url_once

LATENCY = 0.2  # Virtual seconds each answer takes, at the middle of its range.
JITTER = 0.5  # Each request's latency is drawn within LATENCY * (1 +- JITTER).
HOSTS = 3  # Test sites crawled at once by the scenarios that give races room.
SMALL_SITE = 10  # Pages of each of them: the smallest site there is.
MAX_PAGES = 9  # The max_pages of the scenario with a page limit: fewer than its roots.


class Answers:
    """A site of hand-made answers for the simulated network: a function per path.

    It stands where a ``Site`` does (``respond``, ``counters``, ``latency``).
    """

    latency = 0.0

    def __init__(self) -> None:
        self.counters = SiteCounters()
        self.routes: dict[str, Callable[[Request], Response]] = {}

    def respond(self, request: Request) -> Response:
        """Return the answer of ``request``'s path, or 404."""
        route = self.routes.get(request.path)
        return route(request) if route else Response(404, {}, b"not found")


def busy_then_ok(answers: list[dict[str, str] | None], status: int = 503) -> Callable:
    """Return an answer that is ``status`` with each header set given, then 200.

    None in ``answers`` stands for no Retry-After at all.
    """
    calls = 0

    def answer(request: Request) -> Response:
        nonlocal calls
        calls += 1
        if calls <= len(answers):
            return Response(status, answers[calls - 1] or {}, b"busy")
        return Response(200, {"Content-Type": "text/html"}, b"<p>ok</p>")

    return answer


def outcomes(crawler: Any) -> list[tuple[str, int | None, str]]:
    """Return the ``(url, status, exception)`` of each record, in the order made."""
    return [(stat.url, stat.status, repr(stat.exception)) for stat in crawler.done]


def check_timed_out(crawler: Any, why: str) -> None:
    """Check that the crawl made one record, of a TimeoutError; say what it made if not."""
    assert [type(stat.exception) for stat in crawler.done] == [TimeoutError], (
        f"{why}: expected one record, of a TimeoutError; got (url, status, exception)"
        f" {outcomes(crawler)}"
    )


def check_fetched_after(
    crawler: Any, waits: dict[str, int], times: list[float], gap: float, why: str
) -> None:
    """Check two requests ``gap`` s apart or more, a 200 in the end and the ``waits`` counted."""
    assert len(times) == 2 and times[1] - times[0] >= gap, (
        f"{why}: expected two requests at least {gap:g} s apart, got requests at {times}"
    )
    got = (acceptance.first_record(crawler).status, crawler.waits)
    assert got == (200, waits), (
        f"{why}: expected the page fetched (200) in the end and the waits {waits},"
        f" got the status {got[0]} and the waits {got[1]}"
    )


class Busy:
    """A site that turns the first requests of some paths away with a 503, then answers.

    ``busy`` maps a request target to the headers of each 503 it gets
    first (``{}`` for none: no Retry-After).  ``turned_away`` counts them.
    It stands where a ``Site`` does, and answers the rest from ``site``.
    """

    def __init__(self, site: Site, busy: dict[str, list[dict[str, str]]]) -> None:
        self.site = site
        self.counters, self.latency = site.counters, site.latency
        self.left = {target: list(answers) for target, answers in busy.items()}
        self.turned_away: Counter[str] = Counter()

    def respond(self, request: Request) -> Response:
        """Return a 503 while the target has some left, else the site's answer."""
        left = self.left.get(request.target)
        if left:
            self.turned_away[request.target] += 1
            return Response(503, left.pop(0), b"busy, come back later")
        return self.site.respond(request)


# --- What the servers heard: the contract's limits, where a server sees them --------
#
# Each check reads ``world.network.heard``, the network's own note of each
# request as its server took it in, never anything the crawler counts.


def heard_by(world: World) -> dict[str, list[Heard]]:
    """Return what each server heard, in order, by ``host:port``."""
    found: dict[str, list[Heard]] = {}
    for heard in world.network.heard:
        found.setdefault(heard.server, []).append(heard)
    return found


def check_asked_once(
    world: World, why: str, turned_away: Counter[tuple[str, str]] | None = None
) -> None:
    """Check that each URL was asked for once, and once more for each answer that failed.

    An answer fails when the network loses, stalls or resets it, or when
    its server turned it away with a 503: ``turned_away`` counts those by
    ``(server, target)``.
    """
    asked = Counter((heard.server, heard.target) for heard in world.network.heard)
    failed = Counter(
        (heard.server, heard.target)
        for heard in world.network.heard
        if heard.fate not in ("answered", "scripted")
    )
    failed.update(turned_away or Counter())
    wrong = {
        f"{server}{target}": (count, 1 + failed[server, target])
        for (server, target), count in asked.items()
        if count != 1 + failed[server, target]
    }
    assert not wrong, (
        f"{why}: each URL is asked for once, and once more after each answer that failed (a"
        f" 503, a reset); the servers heard these a number of times other than that (heard,"
        f" expected): {wrong}"
    )


def check_most_at_once(world: World, most: int, why: str) -> None:
    """Check that no server had more than ``most`` requests in hand at once."""
    over = {server: count for server, count in world.network.most_in_hand.items() if count > most}
    assert not over, (
        f"{why}: expected at most {most} requests at once at each host; these hosts had more"
        f" at once: {over}"
    )


def check_spaced(world: World, delay: float, why: str) -> None:
    """Check that two requests to one server came at least ``delay`` s apart."""
    for server, heard in heard_by(world).items():
        for earlier, later in itertools.pairwise(heard):
            assert later.time - earlier.time >= delay - 1e-9, (
                f"{why}: expected requests to a host at least {delay:g} s apart; {server} heard"
                f" {earlier.target} at {earlier.time:.4f} s and {later.target} at"
                f" {later.time:.4f} s"
            )


def check_robots_first(world: World, why: str) -> None:
    """Check that each server heard robots.txt first, and no page before it had answered it."""
    for server, heard in heard_by(world).items():
        robots = heard[0]
        assert robots.target == "/robots.txt", (
            f"{why}: expected robots.txt asked first at {server}; it heard first"
            f" {[one.target for one in heard[:3]]}"
        )
        early = [one.target for one in heard[1:] if robots.answered_order is None
                 or one.order < robots.answered_order]  # fmt: skip
        assert not early, (
            f"{why}: a page is asked for once its host's robots.txt is known; {server} heard"
            f" {early} before it had answered robots.txt"
        )


def check_came_back_after(world: World, target: str, seconds: float, why: str) -> None:
    """Check that each server asked for ``target`` again ``seconds`` or more after its 503."""
    for server, heard in heard_by(world).items():
        asked = [one for one in heard if one.target == target]
        first, again = asked[0], asked[1] if len(asked) > 1 else None
        assert first.answered is not None and again is not None, (
            f"{why}: expected {server}{target} asked again after its 503, got it asked"
            f" {len(asked)} time(s)"
        )
        assert again.time - first.answered >= seconds - 1e-9, (
            f"{why}: {server}{target} answered 503 with Retry-After: {seconds:g} at"
            f" {first.answered:.3f} s, and was asked again at {again.time:.3f} s"
        )


def the_oracle(roots: list[str], pages: int, **options: Any) -> set[tuple[str, int | None, Any]]:
    """Return what a crawl of the test sites at ``roots`` (each a site's home) records."""
    expected: set[tuple[str, int | None, Any]] = set()
    for root in roots:
        expected |= expected_results(root, pages, **options)
    return expected


class SimulatedTests:
    """Concurrency, timeouts and delays in virtual time; mixed into AcceptanceTests."""

    stage: types.ModuleType

    def simulate(self, world: World, roots: list[str], **options: Any) -> Any:
        """Crawl ``roots`` in ``world`` with the stage under test; return the Crawler.

        What the servers heard is in ``world.network.heard``: the tests
        measure there, never through a hook that the crawler calls itself.
        """
        from tests.acceptance import run_with_deadline  # That module mixes this one in.

        def run() -> Any:
            crawler = self.stage.Crawler(roots, **options)
            crawler.simulate(world)
            return self.stage.run(crawler)

        return run_with_deadline(run, why=" (the world's time ran on and the crawl never ended)")

    def world(self, seed: int, pages: int = 30, **conditions: Any) -> tuple[World, Site, str]:
        """Return a world under ``seed`` serving a site of ``pages`` pages, and its root."""
        weather = {"latency": LATENCY, "jitter": JITTER, **conditions}
        world = World(seed, Conditions(**weather))
        site = Site(pages)
        return world, site, world.serve(site)

    def answering(
        self, seed: int, paths: list[str], latency: float = 0.05
    ) -> tuple[World, Answers, str]:
        """Return a world under ``seed`` whose site answers each of ``paths`` with a page.

        Every answer takes ``latency`` s, exactly; the site and its root come with it.
        """
        world = World(seed, Conditions(latency=latency, jitter=0.0))
        site = Answers()
        page = Response(200, {"Content-Type": "text/html"}, b"<p>a page</p>")
        site.routes.update(dict.fromkeys(paths, lambda request: page))
        return world, site, world.serve(site)  # type: ignore[arg-type]

    @level(3, "the-whole-crawl")
    def test_many_fetches_at_once(self, seed: int) -> None:
        # Each answer takes at least LATENCY * (1 - JITTER): one fetch at a
        # time cannot take less than their sum.  Ten at once take far less.
        world, site, root = self.world(seed)
        crawler = self.simulate(world, [root], max_tasks=10)
        requests = sum(site.counters.requests.values())
        one_by_one = requests * LATENCY * (1 - JITTER)
        # Level 3 asks for the pages, not for every odd case of the site
        # (redirects and the rest are level 4's): each content page is fetched.
        fetched = {stat.url for stat in crawler.done if stat.status == 200}
        missing = [f"{root}pages/{n}/" for n in range(1, 31) if f"{root}pages/{n}/" not in fetched]
        assert not missing, (
            f"the crawl did not fetch {len(missing)} of the site's 30 pages: {missing[:3]}"
        )
        assert world.time() < one_by_one / 2, (
            f"{requests} requests took {world.time():.1f} s of simulated time: one at a "
            f"time takes at least {one_by_one:.1f} s, and max_tasks=10 should not"
        )

    @pytest.mark.parametrize("max_tasks", [1, 2, 5])
    @level(3, "the-whole-crawl")
    def test_max_tasks_is_reached_and_never_exceeded(self, seed: int, max_tasks: int) -> None:
        world, site, root = self.world(seed)
        # A timeout longer than the whole crawl: this level is about max_tasks,
        # and a timeout's own bugs are level 4's to find.
        self.simulate(world, [root], max_tasks=max_tasks, timeout=600)
        most = site.counters.max_in_flight
        assert most == max_tasks, (
            f"max_tasks={max_tasks}: the site saw at most {most} requests at once, not {max_tasks}"
        )

    @level(4, "the-whole-crawl", "crawling")
    def test_full_crawl_in_simulation_matches_the_oracle(self, seed: int) -> None:
        world, site, root = self.world(seed, pages=300)
        crawler = self.simulate(world, [root], max_tasks=10)
        expected = expected_results(root, 300)
        assert acceptance.results(crawler) == expected, (
            "the 300-page site in simulation: the records (url, status, next_url)"
            f" {acceptance.differ(acceptance.results(crawler), expected)}"
        )
        assert len(crawler.done) == len(crawler.seen_urls), (
            f"expected one record for each URL seen: {len(crawler.seen_urls)} URLs seen,"
            f" {len(crawler.done)} records{acceptance.recorded_twice(crawler)}"
        )
        twice = {path for path, count in site.counters.requests.items() if count > 1}
        assert not twice, f"expected each URL asked once, got {acceptance.some(twice)} asked again"

    @level(4, "fetching-one-url", "timeouts")
    def test_a_lost_answer_ends_in_the_timeout(self, seed: int, logs: Any) -> None:
        world, _, root = self.world(seed, loss=1.0)
        crawler = self.simulate(world, [root], timeout=30.0, max_tries=2)
        check_timed_out(crawler, "an answer that never comes, with timeout=30")
        stat = acceptance.first_record(crawler)
        assert (stat.status, stat.size) == (None, 0), (
            "a request that timed out has no status and no body: expected (status, size)"
            f" (None, 0), got {(stat.status, stat.size)}"
        )
        acceptance.check_logged(logs, f"try 1 for {root} raised", self.stage.__name__)
        # Two tries, each given up after exactly its timeout.
        assert world.time() == pytest.approx(2 * 30.0), (
            "max_tries=2 with timeout=30 and no answer: expected the crawl to end after"
            f" 60 s of simulated time, two timeouts; it ended after {world.time():g} s"
        )

    @level(4, "fetching-one-url", "timeouts")
    def test_a_stalled_answer_ends_in_the_timeout(self, seed: int) -> None:
        # Half the answer arrives, then nothing: the timeout covers the whole request.
        world, _, root = self.world(seed, stall=1.0)
        crawler = self.simulate(world, [root], timeout=5.0, max_tries=3)
        check_timed_out(crawler, "an answer that stalls halfway, with timeout=5")
        assert world.time() == pytest.approx(3 * 5.0), (
            "max_tries=3 with timeout=5 and a stalled answer: expected the crawl to end after"
            f" 15 s of simulated time, three timeouts; it ended after {world.time():g} s"
        )

    @level(4, "fetching-one-url", "timeouts")
    def test_a_timeout_ends_only_its_own_request(self, seed: int) -> None:
        # One worker fetches four pages of 0.2 s each, one after the other
        # (robots.txt first).  A timer of an early request's 0.5 s timeout
        # that is not put away once its answer is in fires during a later
        # request, and ends it.
        world, _, root = self.answering(seed, [f"/{n}" for n in range(4)], latency=0.2)
        roots = [f"{root}{n}" for n in range(4)]
        crawler = self.simulate(world, roots, timeout=0.5, max_tries=1, max_tasks=1)
        failed = {stat.url: repr(stat.exception) for stat in crawler.done if stat.status != 200}
        assert failed == {}, (
            "four pages of 0.2 s each, one at a time, with timeout=0.5: each answered within"
            f" its own timeout, yet these failed: {failed}"
        )

    @level(4, "fetching-one-url", "timeouts")
    def test_a_stalled_server_ends_in_the_crawls_timeout(self, seed: int) -> None:
        # A server that takes the connection and never says a word, beside
        # one that answers: only the silent one's fetch ends in the timeout.
        world, _, root = self.answering(seed, ["/"])
        stalled = world.serve(Scripted({}, lambda: [SILENCE]), port=8001)
        crawler = self.simulate(world, [stalled, root], timeout=0.3, max_tries=1)
        fine, silent = acceptance.record_of(crawler, root), acceptance.record_of(crawler, stalled)
        assert fine.status == 200, (
            f"the page beside a stalled server: expected status 200, got {fine.status}"
            f" ({fine.exception!r})"
        )
        assert silent.status is None and isinstance(silent.exception, TimeoutError), (
            "a server that never answers: expected a failure with a TimeoutError, got the"
            f" status {silent.status} and {silent.exception!r}"
        )

    @level(6, "http-on-the-wire", "timeouts")
    def test_an_answer_that_trickles_in_ends_in_the_timeout(self, seed: int) -> None:
        # One byte a second (a "slowloris" server): every byte comes, but the
        # whole answer never does within the timeout.
        world, _, root = self.world(seed, latency=0.0, jitter=0.0, bandwidth=1.0)
        crawler = self.simulate(world, [root], timeout=5.0, max_tries=2)
        check_timed_out(crawler, "an answer of one byte a second, with timeout=5")
        assert world.time() == pytest.approx(2 * 5.0), (
            "max_tries=2 with timeout=5 and an answer that trickles in: expected the crawl to"
            f" end after 10 s of simulated time, two timeouts; it ended after {world.time():g} s"
        )

    @level(4, "fetching-one-url")
    def test_reset_connections_are_tried_again(self, seed: int) -> None:
        world, site, root = self.world(seed, reset=0.5)
        crawler = self.simulate(world, [root], max_tries=4)
        requests = site.counters.requests
        assert sum(requests.values()) > len(requests), (
            "half the connections reset: expected some URL tried again, got each asked once"
        )
        most = max(requests.values())
        assert most <= 4, f"max_tries=4: expected at most 4 requests for a URL, got {most}"
        for stat in crawler.done:
            assert stat.status is not None or isinstance(stat.exception, OSError), (
                f"{stat.url} has no status, so expected its error to be a network error"
                f" (an OSError), got {stat.exception!r}"
            )

    @level(5, "politeness")
    def test_requests_are_at_least_the_delay_apart(self, seed: int) -> None:
        world, _, root = self.world(seed, pages=10)
        self.simulate(world, [root], delay=1.5, max_tasks=5, obey_robots=True)
        starts = [heard.time for heard in world.network.heard]  # As the server heard them.
        assert len(starts) > 10, (
            "the 10-page site with its robots.txt: expected more than 10 requests,"
            f" got {len(starts)}"
        )
        check_spaced(world, 1.5, "the 10-page site with delay=1.5 and max_tasks=5")

    @level(5, "politeness")
    def test_the_timeout_starts_after_the_wait_for_the_turn(self, seed: int) -> None:
        # The second page waits in line longer than its timeout: a crawler
        # whose timeout covers the wait too gives up on it without a request.
        world, site, root = self.answering(seed, ["/0", "/1"])
        roots = [f"{root}0", f"{root}1"]
        crawler = self.simulate(world, roots, delay=0.8, timeout=0.4, max_tries=1, max_tasks=2)
        failed = {stat.url: repr(stat.exception) for stat in crawler.done if stat.status is None}
        assert failed == {}, f"a page failed after waiting for its turn: {failed}"
        asked = sorted(site.counters.requests)
        assert asked == ["/0", "/1"], f"expected both pages asked for, got requests of {asked}"

    # --- Room for races: several hosts, several roots each, limits at once -------------
    #
    # A race needs room: workers at several hosts at once, roots that lead to
    # the same pages, redirects into URLs already queued, limits that make
    # workers wait.  Each crawl is checked against the oracle, and against
    # the contract's limits where the servers saw them.

    def sites(
        self, seed: int, busy: dict[str, list[dict[str, str]]] | None = None, **conditions: Any
    ) -> tuple[World, list[Busy], list[str]]:
        """Return a world of ``HOSTS`` small test sites, the sites, and four roots on each.

        The roots of a site: its home page, ``/pages/3`` (a redirect to
        ``/pages/3/``, which is a root too) and ``/redirect/foo`` (which
        joins ``/redirect/bar`` on one page).  ``busy`` turns requests away
        with 503s first, on every site (see ``Busy``).
        """
        weather = {"latency": LATENCY, "jitter": JITTER, **conditions}
        world = World(seed, Conditions(**weather))
        sites, roots = [], []
        for number in range(HOSTS):
            site = Busy(Site(SMALL_SITE), busy or {})
            home = world.serve(site, port=8000 + number)  # type: ignore[arg-type]
            sites.append(site)
            roots += [home, home + "pages/3", home + "pages/3/", home + "redirect/foo"]
        return world, sites, roots

    def check_the_oracle(self, crawler: Any, roots: list[str], why: str, **options: Any) -> None:
        """Check the records against the oracle of each site, each URL recorded once."""
        expected = the_oracle(roots[::4], SMALL_SITE, **options)
        got = acceptance.results(crawler)
        assert got == expected, (
            f"{why}: the records (url, status, next_url) {acceptance.differ(got, expected)}"
        )
        check_each_url_once(crawler)

    @level(4, "the-whole-crawl", "crawling")
    def test_hosts_and_roots_in_simulation_match_the_oracle(self, seed: int) -> None:
        world, _, roots = self.sites(seed, reset=0.03)
        crawler = self.simulate(world, roots, max_tasks=8, max_tries=6)
        why = f"{HOSTS} sites of {SMALL_SITE} pages, four roots on each, some connections reset"
        self.check_the_oracle(crawler, roots, why)
        check_asked_once(world, why)

    @level(5, "politeness")
    def test_politeness_in_simulation_holds_at_the_servers(self, seed: int) -> None:
        world, _, roots = self.sites(seed)
        options = {"obey_robots": True, "max_per_host": 2, "delay": 0.05}
        crawler = self.simulate(world, roots, max_tasks=8, **options)
        why = f"{HOSTS} sites, four roots on each, obey_robots, max_per_host=2 and delay=0.05"
        self.check_the_oracle(crawler, roots, why, obey_robots=True)
        check_asked_once(world, why)
        check_robots_first(world, why)
        check_most_at_once(world, 2, why)
        check_spaced(world, 0.05, why)

    @level(5, "politeness", "limits")
    def test_max_pages_in_simulation_holds_at_the_servers(self, seed: int) -> None:
        # Fewer pages than roots: eight workers decide on their roots at
        # once, and a crawler that counts a page only once it is answered
        # lets them all through.
        world, _, roots = self.sites(seed)
        crawler = self.simulate(world, roots, max_tasks=8, max_pages=MAX_PAGES)
        why = f"{HOSTS} sites, four roots on each, max_tasks=8 and max_pages={MAX_PAGES}"
        pages = [heard.target for heard in world.network.heard if heard.target != "/robots.txt"]
        got = sorted(polite_acceptance.fetched(crawler))
        assert (len(pages), len(got)) == (MAX_PAGES, MAX_PAGES), (
            f"{why}: expected {MAX_PAGES} pages asked for and fetched, got {len(pages)} asked"
            f" for and {len(got)} fetched: {got}"
        )
        reasons = set(polite_acceptance.skipped(crawler, Skipped).values())
        assert reasons == {f"max_pages={MAX_PAGES} reached"}, (
            f"{why}: the URLs past max_pages are recorded as skipped,"
            f" 'max_pages={MAX_PAGES} reached': got the reasons {reasons}"
        )
        check_each_url_once(crawler)

    # --- Coming back: Retry-After and backoff, waited for in virtual time -------------

    def clocked(
        self, seed: int, answer: Callable[[World], Callable], **options: Any
    ) -> tuple[Any, list[float]]:
        """Crawl one page answered by ``answer(world)``; return the crawler and when it was asked.

        The times are the server's: when each request came in.
        """
        world, site, root = self.answering(seed, [])
        site.routes["/"] = answer(world)
        crawler = self.simulate(world, [root], **options)
        return crawler, [heard.time for heard in world.network.heard]

    @level(7, "coming-back")
    def test_retry_after_seconds_is_waited_for(self, seed: int) -> None:
        answer = lambda world: busy_then_ok([{"Retry-After": "30"}], status=429)  # noqa: E731
        crawler, times = self.clocked(seed, answer)
        check_fetched_after(crawler, {"retry_after": 1}, times, 30, "a 429 with Retry-After: 30")

    @level(7, "coming-back")
    def test_retry_after_date_is_waited_for(self, seed: int) -> None:
        def answer(world: World) -> Callable:
            # The date a minute ahead on the world's wall clock, which the
            # crawler reads it on: the simulated crawl waits the same under
            # every seed, however long the test takes.
            def dated(request: Request) -> Response:
                later = email.utils.formatdate(world.wall_time() + 60, usegmt=True)
                return Response(503, {"Retry-After": later}, b"busy")

            answers = [dated, busy_then_ok([])]
            return lambda request: answers.pop(0)(request)

        crawler, times = self.clocked(seed, answer)
        # The date has whole seconds: 60 s ahead, written down, is more than 59 s.
        why = "a 503 with a Retry-After date a minute ahead"
        check_fetched_after(crawler, {"retry_after": 1}, times, 59, why)

    @level(7, "coming-back")
    def test_503_without_retry_after_backs_off(self, seed: int) -> None:
        answer = lambda world: busy_then_ok([None, None])  # noqa: E731
        crawler, times = self.clocked(seed, answer, max_tries=3)
        why = "two 503s without Retry-After, then a 200, with max_tries=3"
        assert len(times) == 3, f"{why}: expected three requests, got requests at {times}"
        first, second, third = times
        # Jitter takes at most half of each wait, and each wait doubles.
        assert second - first >= BACKOFF_BASE / 2 and third - second >= BACKOFF_BASE, (
            f"{why}: expected the waits to back off, at least {BACKOFF_BASE / 2:g} s and then"
            f" {BACKOFF_BASE:g} s; the requests started at {times}"
        )
        got = (acceptance.first_record(crawler).status, crawler.waits)
        assert got == (200, {"backoff": 2}), (
            f"{why}: expected the page fetched (200) in the end and the waits {{'backoff': 2}},"
            f" got the status {got[0]} and the waits {got[1]}"
        )

    @level(7, "coming-back")
    def test_busy_hosts_in_simulation_are_come_back_to(self, seed: int) -> None:
        # On every site the home page asks for a second, a content page is
        # turned away twice without saying for how long, all at once with
        # robots.txt, a delay and a limit per host.
        busy: dict[str, list[dict[str, str]]] = {"/": [{"Retry-After": "1"}], "/pages/2/": [{}, {}]}
        world, sites, roots = self.sites(seed, busy)
        options = {"obey_robots": True, "max_per_host": 2, "delay": 0.05, "max_tries": 4}
        crawler = self.simulate(world, roots, max_tasks=8, **options)
        why = f"{HOSTS} sites whose pages answer 503 first, with obey_robots, max_per_host=2"
        self.check_the_oracle(crawler, roots, why, obey_robots=True)
        turned_away = Counter(
            {(f"127.0.0.1:{8000 + n}", target): count
             for n, site in enumerate(sites) for target, count in site.turned_away.items()}
        )  # fmt: skip
        check_asked_once(world, why, turned_away)
        check_came_back_after(world, "/", 1.0, why)
        check_robots_first(world, why)
        check_most_at_once(world, 2, why)
        check_spaced(world, 0.05, why)
        assert crawler.waits == {"retry_after": HOSTS, "backoff": 2 * HOSTS}, (
            f"{why}: expected the waits {{'retry_after': {HOSTS}, 'backoff': {2 * HOSTS}}},"
            f" got {dict(crawler.waits)}"
        )

    @pytest.mark.parametrize("value", ["-5", "soon", "1.5", "", "Tue, 99 Foo 2026 25:61:00 GMT"])
    @level(7, "coming-back")
    def test_unreadable_retry_after_backs_off(self, seed: int, value: str) -> None:
        answer = lambda world: busy_then_ok([{"Retry-After": value}], status=429)  # noqa: E731
        crawler, times = self.clocked(seed, answer)
        why = f"a 429 with Retry-After: {value!r}"
        check_fetched_after(crawler, {"bad_retry_after": 1}, times, BACKOFF_BASE / 2, why)
