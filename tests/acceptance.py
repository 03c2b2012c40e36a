"""The acceptance suite: the crawler contract, checked alike for every stage.

This module is not collected on its own (its name does not start with
``test_``).  Each stage's ``tests/test_acceptance.py`` subclasses
``AcceptanceTests`` and sets ``stage`` to its package, the way CPython's
asyncio tests run one mixin against two Future implementations.  Every
rule of the crawler contract, docs/contract.md, has at least one test here
or in its mixins: ``tests/hostile_acceptance.py`` (hostile servers),
``tests/polite_acceptance.py`` (a first visit's manners) and
``tests/revisit_acceptance.py`` (coming back: Retry-After).

Each crawl runs in a worker thread with a deadline, so a stage that hangs
fails its test instead of hanging the suite; a crawl given a ``timeout``
gets a deadline from its own timeouts, so a crawler that never times out
fails in seconds, saying so.  Every test is marked with its level (see
``tests/grading.py``): the chapter that teaches what it checks, and the rule
of docs/contract.md it checks.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import gzip
import inspect
import logging
import os
import re
import select
import socket
import ssl
import sys
import threading
import time
import traceback
import types
import urllib.parse
import warnings
from collections import Counter
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from shared import FetchStatistic, report
from shared.cli.main import SERVERS, site_server
from shared.crawl.polite import RobotsRules
from shared.sim import Conditions, World
from shared.testsite.server import ServerThread, make_app
from shared.testsite.site import Response, expected_results
from tests.grading import level
from tests.hostile_acceptance import HostileServerTests
from tests.polite_acceptance import PoliteTests
from tests.revisit_acceptance import RevisitTests
from tests.servers import PageServer, ScriptedServer, answer, http_response, refused_port
from tests.sim_acceptance import Answers, SimulatedTests
from tests.tls import default_tls_trusting_the_tests, server_tls

DEADLINE = 60.0  # Seconds a crawl may take before the test calls it a hang.
TIMEOUT_SLACK = 5.0  # Seconds a crawl may take beyond max_tries * timeout.
STACK_SHOWN = 4  # Calls of a hung crawl's stack that its failure names.
ROOT = Path(__file__).resolve().parents[1]
SLOW = pytest.mark.slow  # A test of a second or more: pytest -m "not slow" leaves it out.
# Names no crawl may look up (RFC 2606): the domains, then the endings of names below them.
EXAMPLE_DOMAINS = ("example.com", "example.net", "example.org")
EXAMPLE_NAMES = tuple("." + name for name in EXAMPLE_DOMAINS) + (".example", ".invalid", ".test")


def run_with_deadline(
    function: Callable[[], Any], deadline: float = DEADLINE, why: str = ""
) -> Any:
    """Run ``function`` in a new thread (no event loop there) and return its result.

    Fails the test when it takes longer than ``deadline`` seconds; ``why``
    says what the deadline stands for.
    """
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["result"] = function()
        except BaseException as error:  # Re-raised in the test's thread.
            outcome["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(deadline)
    if thread.is_alive():
        pytest.fail(f"the crawl did not finish within {deadline:g} seconds{why}{where(thread)}")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def where(thread: threading.Thread) -> str:
    """Say where a hung crawl's thread waits: its own innermost calls, and its loop's tasks.

    A hang then tells its cause: a crawl idle in ``q.join()`` lost a URL;
    asyncio waiting in ``shutdown_default_executor`` at the end of a run
    waits for a thread that ``run_in_executor`` started (a name lookup
    that never answers).
    """
    frame = sys._current_frames().get(thread.ident or -1)
    if frame is None:
        return ""
    calls = [call for call in traceback.extract_stack(frame) if is_the_crawls(call.filename)]
    said = [f"in {calls_text(calls[-STACK_SHOWN:])}"] if calls else []
    tasks = [task for task in running_tasks(frame) if task.get_coro() is not None]
    for task in tasks[:STACK_SHOWN]:
        coroutine = innermost(task.get_coro())
        said.append(f"its task {task.get_name()!r} in {coroutine}")
        if coroutine.startswith("shutdown_default_executor "):
            said[-1] += ": asyncio.run waits there for a thread of run_in_executor to end"
    return f"; it was waiting {'; '.join(said)}" if said else ""


def is_the_crawls(filename: str) -> bool:
    """Tell whether a file is the crawl's code: in this repository, and not this file."""
    path = Path(filename)
    return ROOT in path.parents and path != Path(__file__).resolve()


def calls_text(calls: list[traceback.FrameSummary]) -> str:
    """Return calls as ``name (path:line)``, outermost first."""
    return ", ".join(f"{call.name} ({short_path(call.filename)}:{call.lineno})" for call in calls)


def short_path(filename: str) -> str:
    """Return a file's path from the repository's root, or its name."""
    path = Path(filename)
    return path.relative_to(ROOT).as_posix() if ROOT in path.parents else path.name


def running_tasks(frame: types.FrameType | None) -> list[asyncio.Task[Any]]:
    """Return the unfinished tasks of the asyncio loop a thread's stack is running, if any."""
    while frame is not None:
        loop = frame.f_locals.get("self")
        if isinstance(loop, asyncio.AbstractEventLoop):
            return [task for task in asyncio.all_tasks(loop) if not task.done()]
        frame = frame.f_back
    return []


def innermost(coroutine: Any) -> str:
    """Return where the innermost coroutine that ``coroutine`` awaits is paused."""
    while inspect.iscoroutine(getattr(coroutine, "cr_await", None)):
        coroutine = coroutine.cr_await
    frame = getattr(coroutine, "cr_frame", None)
    if frame is None:
        return getattr(coroutine, "__qualname__", repr(coroutine))
    code = frame.f_code
    return f"{code.co_name} ({short_path(code.co_filename)}:{frame.f_lineno})"


def trust_the_test_authority(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the https contexts a crawl gets by default trust the tests' own certificate authority.

    ``ssl.create_default_context()`` is what stages 1 and 2 call, when the
    crawl meets its first https URL; aiohttp made its default context when
    it was imported (``aiohttp.connector._SSL_CONTEXT_VERIFIED``), so that
    one is replaced by a context that trusts the authority too.
    """
    # One context for every call: loading the system's authorities takes a
    # good part of a second, and a context serves any number of connections.
    context = default_tls_trusting_the_tests()
    monkeypatch.setattr(ssl, "create_default_context", lambda *args, **kwargs: context)
    monkeypatch.setattr(aiohttp.connector, "_SSL_CONTEXT_VERIFIED", context)


def crawl_deadline(options: dict[str, Any]) -> tuple[float, str]:
    """Return how long a crawl with ``options`` may take, and what that time stands for.

    A small crawl given a short ``timeout`` ends within its tries' timeouts
    and a few seconds; one that does not has no timeout of its own.
    """
    if "timeout" not in options:
        return DEADLINE, ""
    tries = options.get("max_tries", 4)
    deadline = min(DEADLINE, tries * options["timeout"] + TIMEOUT_SLACK)
    return deadline, f" (max_tries={tries} x timeout={options['timeout']:g} s + slack)"


def open_fds() -> int:
    """Return how many file descriptors this process has open."""
    return len(os.listdir("/proc/self/fd"))


def wait_for_fds(limit: int, deadline: float = 10.0) -> int:
    """Poll until at most ``limit`` fds are open or the deadline passes.

    The server runs in this process too and closes its side of each
    connection a moment after the crawler closes its own.
    """
    end = time.monotonic() + deadline
    while open_fds() > limit and time.monotonic() < end:
        threading.Event().wait(0.02)
    return open_fds()


def offline_lookup(real_getaddrinfo: Callable[..., Any]) -> Callable[..., Any]:
    """Return ``real_getaddrinfo`` except that a name kept for examples fails at once."""

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = (host.decode() if isinstance(host, bytes) else str(host)).lower().rstrip(".")
        if name.endswith(EXAMPLE_NAMES) or name in EXAMPLE_DOMAINS:
            raise socket.gaierror(socket.EAI_NONAME, f"{name} is kept for examples")
        return real_getaddrinfo(host, *args, **kwargs)

    return getaddrinfo


def keep_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Send every lookup through ``offline_lookup``, aiohttp's too (see ``offline`` below)."""
    monkeypatch.setattr(socket, "getaddrinfo", offline_lookup(socket.getaddrinfo))
    monkeypatch.setattr(aiohttp.connector, "DefaultResolver", aiohttp.ThreadedResolver)


def check_allowed(crawler: Any, where: str, allowed: list[str], refused: list[str]) -> None:
    """Check ``url_allowed`` on each URL; fail with a sentence naming every wrong answer."""
    wrongly_refused = [url for url in allowed if not crawler.url_allowed(url)]
    wrongly_allowed = [url for url in refused if crawler.url_allowed(url)]
    wrong = [f"refused {wrongly_refused}"] if wrongly_refused else []
    wrong += [f"allowed {wrongly_allowed}"] if wrongly_allowed else []
    assert not wrong, f"with {where}, url_allowed wrongly " + " and wrongly ".join(wrong)


def check_logged(logs: pytest.LogCaptureFixture, line: str, logger: str) -> None:
    """Check that the crawl logged ``line`` through ``logger``; say what it logged if not."""
    assert line in logs.text, (
        f"expected the log line {line!r} through the logger {logger!r}, named after the"
        f" package; the log held {logs.messages}"
    )


def results(crawler: Any) -> set[tuple[str, int | None, str | None]]:
    """Return the ``(url, status, next_url)`` triples a crawl recorded."""
    return {(stat.url, stat.status, stat.next_url) for stat in crawler.done}


def by_url(crawler: Any) -> dict[str, FetchStatistic]:
    """Return the crawl's statistics keyed by URL."""
    return {stat.url: stat for stat in crawler.done}


def record_of(crawler: Any, url: str) -> FetchStatistic:
    """Return the crawl's record of ``url``; fail with a sentence when it made none."""
    stats = by_url(crawler)
    assert url in stats, f"expected a record of {url}; the crawl recorded {sorted(stats)}"
    return stats[url]


def first_record(crawler: Any) -> FetchStatistic:
    """Return the crawl's first record; fail with a sentence when it made none."""
    assert crawler.done, "expected a record of the root; the crawl recorded nothing"
    return crawler.done[0]


def records(crawler: Any) -> list[tuple[str, str | None, int | None]]:
    """Return the ``(url, next_url, status)`` of each record, in the order made."""
    return [(stat.url, stat.next_url, stat.status) for stat in crawler.done]


def recorded_twice(crawler: Any) -> str:
    """Say which URLs the crawl recorded more than once, and how often; "" if none."""
    counts = Counter(stat.url for stat in crawler.done)
    twice = sorted(f"{url} ({count} records)" for url, count in counts.items() if count > 1)
    return f"; recorded more than once: {some(twice)}" if twice else ""


def outcomes(crawler: Any) -> str:
    """Return each record as the URL and its status, or its exception when it has none."""
    said = [
        f"{stat.url} {stat.status if stat.status is not None else repr(stat.exception)}"
        for stat in crawler.done
    ]
    more = f" and {len(said) - 5} more" if len(said) > 5 else ""
    return ", ".join(said[:5]) + more if said else "none"


def differ(got: Any, expected: Any) -> str:
    """Say how ``got`` differs from ``expected``: for two sets, what it lacks and adds."""
    if not (isinstance(got, set | frozenset) and isinstance(expected, set | frozenset)):
        return f"got {got!r}"
    said = []
    if missing := expected - got:
        said.append(f"lacked {some(missing)}")
    if extra := got - expected:
        said.append(f"had {some(extra)} too")
    return " and ".join(said)


def some(items: Collection[Any], most: int = 5) -> str:
    """Return up to ``most`` of ``items`` as text, in order, saying how many more there are."""
    shown = sorted(items, key=repr)[:most]
    more = f" and {len(items) - most} more" if len(items) > most else ""
    return ", ".join(repr(item) for item in shown) + more


async def drop_connection(request: web.Request) -> web.StreamResponse:
    """Close the connection without answering: a network failure."""
    assert request.transport is not None, "the test server's request has no connection to drop"
    request.transport.close()
    return web.Response(body=b"")


class WorldUse:
    """What a crawl took from its simulated world: selectors (a loop's) and sockets.

    It counts the calls of ``world.selector`` (which ``loop_options`` and
    ``asyncio_loop`` make their loop's selector with) and ``world.socket``
    (which ``make_socket`` and ``aiohttp_socket`` are).
    """

    def __init__(self, world: World) -> None:
        self.selectors = self.sockets = 0
        make_selector, make_socket = world.selector, world.socket

        def selector() -> Any:
            self.selectors += 1
            return make_selector()

        def new_socket(*args: Any) -> Any:
            self.sockets += 1
            return make_socket(*args)

        world.selector = selector  # type: ignore[method-assign]
        world.socket = new_socket  # type: ignore[method-assign, assignment]

    def cause(self, asked: int, outcome: str) -> str | None:
        """Say why a crawl whose world's server was asked ``asked`` times ran outside it, or None.

        ``outcome`` says what came of the crawl (its records, or its error).
        """
        if asked:
            return None
        if not self.selectors:
            return (
                "run() ignores crawler.world: the loop it runs is not the simulated world's,"
                f" so the world's server was asked nothing ({outcome}). When crawler.world"
                " is set, run() makes its loop from it: EventLoop(recorder,"
                " **crawler.world.loop_options()) for stage 1's or stage 2's loop,"
                " asyncio.Runner(loop_factory=crawler.world.asyncio_loop) for asyncio's"
            )
        if not self.sockets:
            return (
                "the crawl's sockets are not the simulated world's (its loop is), so the"
                f" world's server was asked nothing ({outcome}). Make each socket with"
                " self.make_socket() in stages 1 and 2; in asyncio, give aiohttp's"
                " TCPConnector socket_factory=self.world.aiohttp_socket when self.world is set"
            )
        return None


class AcceptanceTests(HostileServerTests, PoliteTests, RevisitTests, SimulatedTests):
    """The contract's tests; a subclass sets ``stage`` to a stage package.

    ``shape`` says which stage the crawler is shaped like ("callbacks",
    "generators" or "asyncio"): a failure's hint names the section that
    teaches the thing in that shape (tests/grading.py).
    """

    stage: types.ModuleType
    shape: str = "asyncio"

    def crawl(self, roots: list[str] | str, **options: Any) -> Any:
        """Crawl with the stage under test and return the finished Crawler."""
        roots = [roots] if isinstance(roots, str) else roots
        deadline, why = crawl_deadline(options)
        return run_with_deadline(lambda: self.stage.crawl(roots, **options), deadline, why)

    def crawler(self, roots: list[str], **options: Any) -> Any:
        """Construct (but do not run) the stage's Crawler."""
        return self.stage.Crawler(roots, **options)

    @pytest.fixture(autouse=True)
    def offline(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Keep every crawl on this machine: a name kept for examples never resolves.

        The test site links and redirects to example.com, which a crawler
        must not follow.  One that follows it all the same (an HTTP library
        left to follow redirects itself) meets a failed lookup at once, the
        same on every machine, instead of what the network there does: an
        answer, or a wait of minutes.  RFC 2606 keeps these names for examples.

        aiohttp asks c-ares instead of ``getaddrinfo`` when aiodns is
        installed (its ``DefaultResolver`` is then ``AsyncResolver``), which
        would send the lookup to the network's DNS server: a crawler's
        session made without a resolver of its own gets the threaded one,
        which asks ``getaddrinfo``, so every lookup of a crawl under test
        goes through this one.
        """
        keep_offline(monkeypatch)

    @pytest.fixture
    def site(self) -> Iterator[ServerThread]:
        """The generated test site with its default size."""
        with ServerThread(make_app(300)) as server:
            yield server

    @pytest.fixture
    def logs(self, caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
        """Capture the stage logger's messages, INFO and up."""
        caplog.set_level(logging.DEBUG, logger=self.stage.__name__)
        return caplog

    # --- Entry points -------------------------------------------------------

    @level(1, "entry-points")
    def test_package_exports_crawl_and_crawler(self) -> None:
        assert callable(self.stage.crawl), "the package exports a function crawl(roots, **options)"
        assert isinstance(self.stage.Crawler, type), "the package exports a class Crawler"

    @level(2, "entry-points")
    def test_crawler_attributes_after_a_crawl(self, pages: PageServer) -> None:
        root = pages.add_page("/", ["/a"])
        crawler = self.crawl(
            [root], exclude="nothing", strict=False, max_redirect=3, max_tries=2,
            max_tasks=4, timeout=5.0, max_size=1000,
        )  # fmt: skip
        assert crawler.roots == [root], f"expected roots [{root!r}], got {crawler.roots!r}"
        kept = (
            *(crawler.exclude, crawler.strict, crawler.max_redirect, crawler.max_tries),
            *(crawler.max_tasks, crawler.timeout, crawler.max_size),
        )
        given = ("nothing", False, 3, 2, 4, 5.0, 1000)
        assert kept == given, (
            "the crawler keeps the options it was given: expected exclude, strict, max_redirect,"
            f" max_tries, max_tasks, timeout and max_size {given}, got {kept}"
        )
        expected = {root, pages.url + "a"}
        assert crawler.seen_urls == expected, (
            f"a page and its link: seen_urls {differ(crawler.seen_urls, expected)}"
        )
        kinds = {type(stat).__name__ for stat in crawler.done}
        assert kinds == {"FetchStatistic"}, f"done holds FetchStatistic records only, not {kinds}"
        assert crawler.t0 <= crawler.t1, f"the crawl ended (t1={crawler.t1}) before t0={crawler.t0}"

    @level(1, "entry-points")
    def test_default_options(self) -> None:
        crawler = self.crawler(["http://example.com/"])
        kept = (
            *(crawler.exclude, crawler.strict, crawler.max_redirect, crawler.max_tries),
            *(crawler.max_tasks, crawler.timeout, crawler.max_size),
        )
        defaults = (None, True, 10, 4, 10, 10.0, 10 * 2**20)
        assert kept == defaults, (
            "expected the defaults of exclude, strict, max_redirect, max_tries, max_tasks,"
            f" timeout and max_size {defaults}, got {kept}"
        )
        assert crawler.seen_urls == set() and crawler.done == [], (
            "a crawler not yet run has seen and recorded nothing: got seen_urls"
            f" {crawler.seen_urls} and done {crawler.done}"
        )

    @level(1, "entry-points")
    def test_constructing_a_crawler_does_no_io(self) -> None:
        with socket.create_server(("127.0.0.1", 0)) as listener:
            url = f"http://127.0.0.1:{listener.getsockname()[1]}/"
            crawler = run_with_deadline(lambda: self.crawler([url]))
            readable, _, _ = select.select([listener], [], [], 0.1)
        assert readable == [], (
            "Crawler() does no I/O: expected no connection to the server, got one"
        )
        assert crawler.done == [], f"a crawler not yet run has recorded nothing, not {crawler.done}"

    @level(2, "entry-points")
    def test_crawl_runs_many_times_without_leaks(self, pages: PageServer) -> None:
        root = pages.add_page("/", ["/a", "/b"])
        pages.add_page("/a", ["/"])
        self.crawl([root])  # Warm up: imports and caches open what they keep.
        gc.collect()  # What an earlier test left to the collector is not this crawl's.
        before = open_fds()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(3):
                done = len(self.crawl([root]).done)
                assert done == 3, f"a crawl of 3 pages: expected 3 records, got {done}"
            gc.collect()
        after = wait_for_fds(before)
        assert after <= before, (
            f"three crawls: expected every descriptor closed after them, got {after - before}"
            " left open"
        )
        leaked = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
        assert leaked == [], (
            f"three crawls: expected nothing left to the garbage collector, got {leaked}"
        )

    @level(1, "entry-points")
    def test_crawl_from_a_thread_with_a_running_loop_elsewhere(self, pages: PageServer) -> None:
        root = pages.add_page("/", [])

        async def main() -> Any:
            return await asyncio.to_thread(self.stage.crawl, [root])

        crawler = run_with_deadline(lambda: asyncio.run(main()))
        assert results(crawler) == {(root, 200, None)}, (
            "crawl() called from a thread while another thread runs an event loop: expected"
            f" one record of {root} with status 200, got {records(crawler)}"
        )

    @level(1, "simulation", "simulation")
    def test_a_crawl_runs_in_the_simulated_world(self) -> None:
        # The world answers at a real port that refuses: a crawl that takes
        # real sockets for the world's is refused at once, and reaches nobody.
        with refused_port() as real:
            world = World(0, Conditions(latency=0.05))
            site = Answers()
            page = Response(200, {"Content-Type": "text/html"}, b"<p>one page</p>")
            site.routes["/"] = lambda request: page
            root = world.serve(site, "127.0.0.1", urllib.parse.urlsplit(real).port or 0)  # type: ignore[arg-type]
            used = WorldUse(world)
            crawler = self.stage.Crawler([root])
            crawler.simulate(world)
            try:
                run_with_deadline(lambda: self.stage.run(crawler))
            except NotImplementedError:
                raise  # A method still to write: its message says which.
            except Exception as error:
                outcome = f"the crawl raised {error!r}"
            else:
                outcome = f"the crawl's records: {outcomes(crawler)}"
        cause = used.cause(sum(site.counters.requests.values()), outcome)
        if cause is not None:
            pytest.fail(cause, pytrace=False)
        assert records(crawler) == [(root, None, 200)], (
            f"one page in the simulated world: expected one record of {root} with status 200,"
            f" got {outcome}"
        )
        assert world.time() >= 0.05, (
            "the answer takes 0.05 s of the world's time: expected the crawl to end after"
            f" it, on the world's clock, got {world.time():g} s"
        )

    # The log lines a crawl writes are shown in its retry loop: the topic "retries".
    @level(4, "entry-points", "retries")
    def test_logs_through_the_package_logger(self, pages: PageServer, logs) -> None:
        root = pages.add_redirect("/", "/a")
        self.crawl([root], max_redirect=0)
        names = {record.name for record in logs.records}
        assert self.stage.__name__ in names, (
            f"a redirect past max_redirect=0 is logged through the logger {self.stage.__name__!r},"
            f" named after the package; the crawl logged through {sorted(names) or 'none'}"
        )

    # --- URLs -----------------------------------------------------------------

    @level(1, "urls")
    def test_root_is_stored_normalized(self, pages: PageServer) -> None:
        pages.add_page("/", [])
        root = f"HTTP://127.0.0.1:{pages.port}#fragment"  # No path, upper-case scheme.
        crawler = self.crawl([root])
        urls = [stat.url for stat in crawler.done]
        assert urls == [pages.url], f"the root {root!r} is recorded as {pages.url!r}, not {urls}"
        assert crawler.seen_urls == {pages.url}, (
            f"the root {root!r} is seen as {pages.url!r}, not as {crawler.seen_urls}"
        )

    @level(2, "urls")
    def test_links_are_stored_normalized(self, pages: PageServer) -> None:
        host = pages.url.rstrip("/").replace("http://", "")
        links = [
            f"HTTP://{host}/a#frag",
            "/b?x=2&y=1",
            f"http://{host.upper()}/c/",
            "/a",
            "/d#",
        ]
        root = pages.add_page("/", links)
        crawler = self.crawl([root])
        base = pages.url.rstrip("/")
        expected = {pages.url, base + "/a", base + "/b?x=2&y=1", base + "/c/", base + "/d"}
        assert crawler.seen_urls == expected, (
            f"links normalized: seen_urls {differ(crawler.seen_urls, expected)}"
        )
        counted = record_of(crawler, pages.url).num_urls
        assert counted == 4, f"the page links to 4 distinct URLs once normalized, not {counted}"

    @level(2, "links")
    def test_link_sources_are_a_area_and_link_only(self, pages: PageServer) -> None:
        body = b"""<html><head><link rel="stylesheet" href="/style.css">
        <script src="/script.js"></script><style>a { background: url(/bg.png) }</style>
        </head><body><img src="/img.png"><a href="/a">a</a>
        <map><area href="/area" shape="rect" coords="0,0,1,1"></map>
        <!-- <a href="/in-comment">x</a> -->
        <script>var s = '<a href="/in-script">';</script>
        <style>/* <a href="/in-style"> */</style>
        <iframe src="/frame"></iframe><form action="/form"></form></body></html>"""
        root = pages.add_page("/", body=body)
        crawler = self.crawl([root])
        found = {url.removeprefix(pages.url.rstrip("/")) for url in crawler.seen_urls}
        expected = {"/", "/style.css", "/a", "/area"}
        assert found == expected, (
            f"links come from <a>, <area> and <link> only: the paths seen {differ(found, expected)}"
        )

    @level(2, "links")
    def test_links_resolve_against_base_href(self, pages: PageServer) -> None:
        body = b'<head><base href="/dir/sub/"></head><a href="x">x</a><a href="../y">y</a>'
        root = pages.add_page("/page", body=body)
        crawler = self.crawl([root])
        base = pages.url.rstrip("/")
        expected = {root, base + "/dir/sub/x", base + "/dir/y"}
        assert crawler.seen_urls == expected, (
            f"links resolved against <base href>: seen_urls {differ(crawler.seen_urls, expected)}"
        )

    @level(2, "links")
    def test_links_resolve_against_the_page_url(self, pages: PageServer) -> None:
        root = pages.add_page("/a/b/page", ["c", "../d", "./e/", "?q=1", "/f"])
        crawler = self.crawl([root])
        base = pages.url.rstrip("/")
        expected = {base + path for path in ["/a/b/c", "/a/d", "/a/b/e/", "/a/b/page?q=1", "/f"]}
        expected.add(root)
        assert crawler.seen_urls == expected, (
            "links resolved against the page's URL:"
            f" seen_urls {differ(crawler.seen_urls, expected)}"
        )

    @level(2, "links")
    def test_href_whitespace_stripped_and_bad_hrefs_skipped(self, pages: PageServer) -> None:
        links = ["  /a  ", "\n/b\t", "http://[broken/", "http://127.0.0.1:99999/", "/c"]
        root = pages.add_page("/", links)
        crawler = self.crawl([root])
        base = pages.url.rstrip("/")
        expected = {pages.url, base + "/a", base + "/b", base + "/c"}
        assert crawler.seen_urls == expected, (
            "hrefs stripped and broken ones skipped:"
            f" seen_urls {differ(crawler.seen_urls, expected)}"
        )

    @level(2, "urls")
    def test_url_allowed_strict(self) -> None:
        crawler = self.crawler(["http://example.com"])
        allowed = ["http://example.com/a", "http://www.example.com", "https://EXAMPLE.com/b"]
        refused = ["http://foo.example.com", "http://www.www.example.com", "http://example.org"]
        check_allowed(crawler, "the root http://example.com", allowed, refused)

    @level(2, "urls")
    def test_url_allowed_strict_from_a_www_root(self) -> None:
        crawler = self.crawler(["http://www.example.com/"])
        root = "the root http://www.example.com/"
        check_allowed(crawler, root, ["http://example.com/"], ["http://foo.example.com/"])

    @level(2, "urls")
    def test_url_allowed_lenient(self) -> None:
        crawler = self.crawler(["http://example.com"], strict=False)
        allowed = ["http://www.example.com", "http://foo.bar.example.com"]
        refused = ["http://example.org", "http://notexample.com"]
        check_allowed(crawler, "the root http://example.com, strict=False", allowed, refused)

    @level(2, "urls")
    def test_url_allowed_exclude(self) -> None:
        crawler = self.crawler(["http://example.com"], exclude=r".*pattern")
        refused = ["http://example.com/pattern", "http://example.com/a/pattern/b"]
        where = "the root http://example.com, exclude='.*pattern'"
        check_allowed(crawler, where, ["http://example.com"], refused)

    @level(2, "urls")
    def test_url_allowed_schemes(self) -> None:
        crawler = self.crawler(["http://example.com"])
        refused = ["ftp://example.com/", "mailto:a@example.com", "javascript:x()", "file:///x"]
        check_allowed(crawler, "the root http://example.com", ["https://example.com/"], refused)

    @level(2, "urls")
    def test_url_allowed_roots(self) -> None:
        crawler = self.crawler(["http://a", "http://b", "not-a-host"])
        refused = ["http://c/c", "http://127.0.0.1", "not-a-host"]
        where = "the roots http://a, http://b and not-a-host"
        check_allowed(crawler, where, ["http://a/a", "http://b/b"], refused)

    @level(2, "urls")
    def test_url_allowed_deep_root(self) -> None:
        crawler = self.crawler(["http://a/a#fragment"])
        check_allowed(crawler, "the root http://a/a#fragment", ["http://a/b"], [])

    @level(2, "urls")
    def test_url_allowed_ip_literal_matches_exactly(self) -> None:
        crawler = self.crawler(["http://127.0.0.1:8080/", "http://[::1]/"], strict=False)
        allowed = ["http://127.0.0.1/other-port-is-same-host", "http://[::1]:81/"]
        refused = ["http://127.0.0.2/", "http://0.0.1/", "http://www.127.0.0.1/"]
        where = "the roots http://127.0.0.1:8080/ and http://[::1]/, strict=False"
        check_allowed(crawler, where, allowed, refused)

    @level(2, "urls")
    def test_url_allowed_does_not_raise(self) -> None:
        crawler = self.crawler(["http://example.com"])
        for url in ["", "http://[", "http://example.com:port/", "::::", "http://", "\x00"]:
            try:
                answer = crawler.url_allowed(url)
            except Exception as error:
                pytest.fail(f"url_allowed({url!r}) raised {error!r}: it must answer False")
            assert answer is False, f"url_allowed({url!r}) answered {answer!r}, not False"

    @level(1, "entry-points")
    def test_bad_options_raise_value_error(self) -> None:
        bad: list[dict[str, Any]] = [
            {"max_tasks": 0},
            {"max_tries": 0},
            {"timeout": 0},
            {"exclude": "("},
        ]
        for options in bad:
            with pytest.raises(ValueError):
                self.crawler(["http://example.com/"], **options)

    # --- Fetching one URL ------------------------------------------------------

    @level(2, "links")
    def test_link_to_a_missing_page(self, pages: PageServer) -> None:
        pages.add_page("/", ["/foo"])
        crawler = self.crawl([pages.url])
        expected = [(pages.url, None, 200), (pages.url + "foo", None, 404)]
        assert records(crawler) == expected, (
            f"/ links to a missing /foo: expected the records (url, next_url, status) {expected},"
            f" got {records(crawler)}"
        )
        counts = (first_record(crawler).num_urls, first_record(crawler).num_new_urls)
        assert counts == (1, 1), f"/ has 1 link, new: expected (1, 1) links, got {counts}"

    @level(2, "the-whole-crawl")
    def test_link_cycle(self, pages: PageServer) -> None:
        foo = pages.add_page("/foo", ["/bar"])
        bar = pages.add_page("/bar", ["/foo"])
        crawler = self.crawl([foo])
        counts = [(s.url, s.num_urls, s.num_new_urls) for s in crawler.done]
        expected = [(foo, 1, 1), (bar, 1, 0)]
        assert counts == expected, (
            "/foo and /bar link to each other: expected each fetched once, with (url, links,"
            f" new links) {expected}, got {counts}"
        )

    @level(2, "urls")
    def test_off_site_links_are_not_followed(self, pages: PageServer) -> None:
        pages.add_page("/", ["http://example.com/", "http://localhost/x"])
        crawler = self.crawl([pages.url])
        got = (first_record(crawler).num_urls, len(crawler.done))
        assert got == (0, 1), (
            "a page whose two links leave the site: expected 0 links counted and 1 record,"
            f" got {got[0]} links and the records {records(crawler)}"
        )

    @level(2, "urls")
    def test_non_http_links_are_not_followed(self, pages: PageServer) -> None:
        host = pages.url.removeprefix("http://")
        pages.add_page("/", [f"ftp://{host}x", f"mailto:x@{host}", "javascript:go()"])
        crawler = self.crawl([pages.url])
        got = (first_record(crawler).num_urls, len(crawler.done))
        assert got == (0, 1), (
            "a page whose links are ftp:, mailto: and javascript:: expected 0 links counted and"
            f" 1 record, got {got[0]} links and the records {records(crawler)}"
        )

    @pytest.mark.parametrize("status", [300, 301, 302, 303, 307, 308])
    @level(4, "fetching-one-url", "redirects")
    def test_redirect_is_recorded_and_followed(self, pages: PageServer, status: int) -> None:
        root = pages.add_redirect("/", "/target#frag", status)
        target = pages.add_page("/target", [])
        crawler = self.crawl([root])
        expected = [(root, target, status), (target, None, 200)]
        assert records(crawler) == expected, (
            f"a {status} to /target: expected the redirect recorded, then the target fetched:"
            f" (url, next_url, status) {expected}, got {records(crawler)}"
        )
        redirect = FetchStatistic(
            url=root,
            next_url=target,
            status=status,
            exception=None,
            size=0,
            content_type=None,
            encoding=None,
            num_urls=0,
            num_new_urls=0,
        )
        assert first_record(crawler) == redirect, (
            f"a redirect's record has no size, type or links: expected {redirect},"
            f" got {first_record(crawler)}"
        )

    @level(4, "fetching-one-url", "redirects")
    def test_redirect_chain_and_limit(self, pages: PageServer, logs) -> None:
        foo, bar = pages.url + "foo", pages.url + "bar"
        root = pages.add_redirect("/", foo)
        pages.add_redirect("/foo", bar)
        crawler = self.crawl([root])
        expected = [(root, foo, 302), (foo, bar, 302), (bar, None, 404)]
        assert records(crawler) == expected, (
            "/ redirects to /foo, /foo to /bar: expected each hop recorded, (url, next_url,"
            f" status) {expected}, got {records(crawler)}"
        )
        logs.clear()
        crawler = self.crawl([root], max_redirect=1)
        expected = expected[:2]
        assert records(crawler) == expected, (
            f"with max_redirect=1, /bar is past the limit: expected {expected},"
            f" got {records(crawler)}"
        )
        check_logged(logs, "redirect limit reached", self.stage.__name__)

    @level(4, "fetching-one-url", "redirects")
    def test_max_redirect_zero_follows_no_redirect(self, pages: PageServer) -> None:
        root = pages.add_redirect("/", "/a")
        pages.add_page("/a", [])
        crawler = self.crawl([root], max_redirect=0)
        expected = [(root, pages.url + "a", 302)]
        assert records(crawler) == expected, (
            "max_redirect=0: expected the redirect recorded and not followed, (url, next_url,"
            f" status) {expected}, got {records(crawler)}"
        )

    @level(4, "fetching-one-url", "redirects")
    def test_redirect_cycle(self, pages: PageServer) -> None:
        foo, bar = pages.url + "foo", pages.url + "bar"
        pages.add_redirect("/bar", foo)
        pages.add_redirect("/foo", bar)
        crawler = self.crawl([bar])
        expected = [(bar, foo, 302), (foo, bar, 302)]
        assert records(crawler) == expected, (
            "/bar and /foo redirect to each other: expected each recorded once as a redirect,"
            f" (url, next_url, status) {expected}, got {records(crawler)}"
        )

    @level(4, "fetching-one-url", "redirects")
    def test_redirect_join_fetches_the_target_once(self, pages: PageServer) -> None:
        foo, bar, baz, quux = (pages.url + name for name in ["foo", "bar", "baz", "quux"])
        pages.add_redirect("/foo", baz)
        pages.add_redirect("/bar", baz)
        pages.add_redirect("/baz", quux)
        crawler = self.crawl([foo, bar])
        expected = {(foo, 302, baz), (bar, 302, baz), (baz, 302, quux), (quux, 404, None)}
        assert results(crawler) == expected, (
            "/foo and /bar redirect to /baz, /baz to /quux: the records (url, status, next_url)"
            f" {differ(results(crawler), expected)}"
        )
        asked = pages.requests["/baz"]
        assert asked == 1, f"two redirects join at /baz: expected it asked once, not {asked} times"

    @level(4, "fetching-one-url", "redirects")
    def test_redirect_off_site_is_recorded_not_followed(self, pages: PageServer) -> None:
        root = pages.add_redirect("/", "http://example.com/elsewhere")
        crawler = self.crawl([root])
        expected = [(root, "http://example.com/elsewhere", 302)]
        assert records(crawler) == expected, (
            "a redirect off the site is recorded and not followed: expected (url, next_url,"
            f" status) {expected}, got {records(crawler)}"
        )
        assert crawler.seen_urls == {root}, (
            "a redirect off the site is not followed:"
            f" seen_urls {differ(crawler.seen_urls, {root})}"
        )

    @level(4, "fetching-one-url", "redirects")
    def test_redirect_to_non_http_scheme_is_not_followed(self, pages: PageServer) -> None:
        host = pages.url.removeprefix("http://")
        root = pages.add_redirect("/", f"ftp://{host}file")
        crawler = self.crawl([root])
        expected = [(root, f"ftp://{host}file", 302)]
        assert records(crawler) == expected, (
            "a redirect to ftp: is recorded and not followed: expected (url, next_url, status)"
            f" {expected}, got {records(crawler)}"
        )

    @level(4, "fetching-one-url", "redirects")
    def test_redirect_to_an_excluded_url_is_not_followed(self, pages: PageServer) -> None:
        root = pages.add_redirect("/", "/private/x")
        crawler = self.crawl([root], exclude="private")
        expected = [(root, pages.url + "private/x", 302)]
        assert records(crawler) == expected, (
            "a redirect to an excluded URL is recorded and not followed: expected (url,"
            f" next_url, status) {expected}, got {records(crawler)}"
        )

    @level(4, "fetching-one-url", "redirects")
    def test_redirect_target_is_normalized(self, pages: PageServer) -> None:
        host = pages.url.removeprefix("http://").rstrip("/")
        root = pages.add_redirect("/", f"HTTP://{host}/a#frag")
        pages.add_page("/a", [])
        crawler = self.crawl([root])
        expected = pages.url + "a"
        got = first_record(crawler).next_url
        assert got == expected, (
            f"a Location of HTTP://HOST/a#frag: expected the redirect's next_url {expected!r},"
            f" got {got!r}"
        )

    @level(4, "fetching-one-url", "redirects")
    def test_redirect_status_without_location_is_a_response(self, pages: PageServer) -> None:
        async def no_location(request: web.Request) -> web.StreamResponse:
            return web.Response(status=302, body=b"moved, somewhere", content_type="text/plain")

        root = pages.add_handler("/", no_location)
        crawler = self.crawl([root])
        expected = [
            FetchStatistic(
                url=root,
                next_url=None,
                status=302,
                exception=None,
                size=16,
                content_type="text/plain",
                encoding="utf-8",
                num_urls=0,
                num_new_urls=0,
            )
        ]
        assert crawler.done == expected, (
            f"a 302 without Location is an answer like any other: expected {expected},"
            f" got {crawler.done}"
        )

    @pytest.mark.parametrize(
        ("header", "content_type", "encoding"),
        [
            ("text/html; charset=utf-8", "text/html", "utf-8"),
            ("text/html", "text/html", "utf-8"),
            # The encoding actually used: labels mapped as browsers map them.
            ("text/html; charset=ascii", "text/html", "cp1252"),
            ("text/html;charset=ISO-8859-1; foo=bar", "text/html", "cp1252"),
            ('text/html; charset="utf-8"', "text/html", "utf-8"),
            ("TEXT/HTML ; CHARSET = Shift_JIS ", "text/html", "cp932"),
            ('text/html; title="a;charset=gbk"; charset=windows-1251', "text/html", "cp1251"),
            ("text/html; charset=koi8-r; charset=gbk", "text/html", "koi8-r"),  # The first.
            ("text/html; charset=no-such-codec", "text/html", "utf-8"),  # Ignored.
            ("foo", "foo", "utf-8"),
            ("image/png", "image/png", "utf-8"),
        ],
    )
    @level(1, "reading-a-pages-text")
    def test_content_type_and_encoding(
        self, pages: PageServer, header: str, content_type: str, encoding: str
    ) -> None:
        root = pages.add_page("/", body=b"<p>hello</p>", content_type=header)
        crawler = self.crawl([root])
        stat = first_record(crawler)
        got = (stat.content_type, stat.encoding, stat.size)
        expected = (content_type, encoding, 12)
        assert got == expected, (
            f"Content-Type {header!r}: expected the content type, encoding and size {expected},"
            f" got {got}"
        )

    @pytest.mark.parametrize(
        ("header", "body", "encoding"),
        [
            # A <meta> declaration counts only when the header names no charset.
            ("text/html", '<meta charset="gbk"><a href="/{}">x</a>', "gb18030"),
            ("text/html; charset=gbk", '<meta charset="utf-8"><a href="/{}">x</a>', "gb18030"),
            ("text/html", '<meta http-equiv="Content-Type" content="text/html; charset=GBK">'
             '<a href="/{}">x</a>', "gb18030"),
            # A byte order mark beats everything.
            ("text/html; charset=gbk", '\ufeff<meta charset="gbk"><a href="/{}">x</a>', "utf-8"),
        ],
    )  # fmt: skip
    @level(2, "reading-a-pages-text")
    def test_encoding_is_found_as_browsers_find_it(
        self, pages: PageServer, header: str, body: str, encoding: str
    ) -> None:
        text = body.format("\u4e2d\u6587")  # Chinese: 'Chinese (language)'.
        root = pages.add_page("/", body=text.encode(encoding), content_type=header)
        pages.add_page("/\u4e2d\u6587", [])
        target = pages.url + "%E4%B8%AD%E6%96%87"
        crawler = self.crawl([root])
        found = record_of(crawler, root).encoding
        assert found == encoding, (
            f"Content-Type {header!r} and the body's own declaration: expected the encoding"
            f" {encoding!r}, got {found!r}"
        )
        status = record_of(crawler, target).status
        assert status == 200, (
            f"a link to /\u4e2d\u6587 in a page in {encoding}: expected it read in that"
            f" encoding and fetched (200), got the status {status} (a link read in another"
            " encoding names another URL)"
        )

    @level(1, "fetching-one-url")
    def test_missing_content_type(self) -> None:
        response = b'HTTP/1.0 200 OK\r\nContent-Length: 18\r\n\r\n<a href="/x">x</a>'
        with ScriptedServer(answer(response)) as server:
            crawler = self.crawl([server.url])
        expected = [
            FetchStatistic(
                url=server.url,
                next_url=None,
                status=200,
                exception=None,
                size=18,
                content_type=None,
                encoding="utf-8",
                num_urls=0,
                num_new_urls=0,
            )
        ]
        assert crawler.done == expected, (
            "an answer without Content-Type: expected no content type and no links read,"
            f" {expected}, got {crawler.done}"
        )

    @pytest.mark.parametrize(
        ("content_type", "parsed"),
        [
            ("text/html", True),
            ("application/xhtml+xml", True),
            ("application/xml", True),
            ("text/plain", False),
            ("image", False),
            ("application/json", False),
            ("text/xml", False),
        ],
    )
    @level(2, "fetching-one-url")
    def test_links_parsed_only_in_html_and_xml(
        self, pages: PageServer, content_type: str, parsed: bool
    ) -> None:
        root = pages.add_page("/doc", body=b'<a href="/">home</a>', content_type=content_type)
        pages.add_page("/", [])
        crawler = self.crawl([root])
        stat = first_record(crawler)
        got = (stat.content_type, stat.num_urls, len(crawler.done))
        expected = (content_type, int(parsed), 1 + int(parsed))
        assert got == expected, (
            f"a page of {content_type} with one link, {'read' if parsed else 'not read'} for links:"
            f" expected the content type, links counted and records {expected}, got {got}"
        )

    @level(2, "fetching-one-url")
    def test_links_parsed_only_for_status_200(self, pages: PageServer) -> None:
        body = b'<a href="/a">a</a>'
        root = pages.add_page("/", body=body, status=404)
        crawler = self.crawl([root])
        expected = [
            FetchStatistic(
                url=root,
                next_url=None,
                status=404,
                exception=None,
                size=len(body),
                content_type="text/html",
                encoding="utf-8",
                num_urls=0,
                num_new_urls=0,
            )
        ]
        assert crawler.done == expected, (
            f"the links of a 404 page are not followed: expected {expected}, got {crawler.done}"
        )

    @level(2, "links")
    def test_body_decoded_with_its_charset(self, pages: PageServer) -> None:
        body = '<a href="/caf\xe9">caf\xe9</a>'.encode("latin-1")
        root = pages.add_page("/", body=body, content_type="text/html; charset=latin-1")
        pages.add_page("/caf\xe9", [])
        crawler = self.crawl([root])
        # Stored, requested and reported as a browser requests it: UTF-8, percent-encoded.
        cafe = pages.url + "caf%C3%A9"
        assert cafe in crawler.seen_urls, (
            f"a latin-1 page links to /caf\xe9: expected {cafe} seen, got {crawler.seen_urls}"
        )
        status = record_of(crawler, cafe).status
        assert status == 200, f"expected {cafe} fetched with status 200, got {status}"

    @level(2, "links")
    def test_non_ascii_links_are_requested_as_browsers_request_them(
        self, pages: PageServer
    ) -> None:
        hrefs = ["/\u0441\u0442\u0440?q=\u043f\u0440\u0438", "/a b/c\u0436?d e"]
        body = "".join(f'<a href="{href}">x</a>' for href in hrefs).encode("cp1251")
        root = pages.add_page("/", body=body, content_type="text/html; charset=windows-1251")
        paths = ["/%D1%81%D1%82%D1%80?q=%EF%F0%E8", "/a%20b/c%D0%B6?d%20e"]
        crawler = self.crawl([root])
        expected = {root} | {pages.url.rstrip("/") + path for path in paths}
        assert crawler.seen_urls == expected, (
            "non-ASCII links, the path in UTF-8 and the query in the page's encoding:"
            f" seen_urls {differ(crawler.seen_urls, expected)}"
        )
        # The path in UTF-8, the query in the page's encoding, both exactly as stored.
        asked, wanted = sorted(pages.targets), sorted(["/", *paths])
        assert asked == wanted, f"expected the requests for {wanted}, the server got {asked}"

    @level(2, "reading-a-pages-text")
    def test_undecodable_bytes_are_replaced(self, pages: PageServer) -> None:
        body = b'<p>\xff\xfe bad bytes</p><a href="/after">after</a>'
        root = pages.add_page("/", body=body, content_type="text/html; charset=utf-8")
        crawler = self.crawl([root])
        after = pages.url + "after"
        assert after in crawler.seen_urls, (
            f"bytes that are not UTF-8 are replaced and the page read on: expected {after} seen,"
            f" got {crawler.seen_urls}"
        )

    @level(2, "urls", "one-request")
    def test_the_url_requested_is_the_url_stored(self, pages: PageServer) -> None:
        # Kept as the normal form writes them: %7e, %2F and "|".
        paths = ["/%7euser/", "/a%2Fb/%7E", "/c|d", "/g?x=%7e&y=~"]
        root = pages.add_page("/", paths)
        crawler = self.crawl([root])
        expected = {root} | {root.rstrip("/") + path for path in paths}
        assert crawler.seen_urls == expected, (
            f"URLs kept as written: seen_urls {differ(crawler.seen_urls, expected)}"
        )
        asked, wanted = sorted(pages.targets), sorted(["/", *paths])
        assert asked == wanted, (
            f"a URL was re-encoded on the wire: expected the requests {wanted}, the server got"
            f" {asked}"
        )

    @level(4, "http-on-the-wire", "compression")
    def test_every_stage_asks_for_gzip_and_deflate_and_decodes_them(
        self, pages: PageServer
    ) -> None:
        asked = []
        body = b'<a href="/next">next</a>' * 100

        async def compressed(request: web.Request) -> web.StreamResponse:
            asked.append(request.headers.get("Accept-Encoding"))
            headers = {"Content-Type": "text/html", "Content-Encoding": "gzip"}
            return web.Response(body=gzip.compress(body), headers=headers)

        root = pages.add_handler("/", compressed)
        crawler = self.crawl([root])
        stat = record_of(crawler, root)
        assert asked == ["gzip, deflate"], (
            f"expected one request with Accept-Encoding 'gzip, deflate', got {asked}"
        )
        got, expected = (stat.status, stat.size, stat.num_urls), (200, len(body), 1)
        assert got == expected, (
            "a gzip body is decoded: expected the status, the decoded size and links counted"
            f" {expected}, got {got}"
        )

    @level(2, "reading-a-pages-text")
    def test_unknown_charset_does_not_break_the_crawl(self, pages: PageServer) -> None:
        root = pages.add_page("/", ["/a"], content_type="text/html; charset=no-such-codec")
        crawler = self.crawl([root])
        stat = first_record(crawler)
        got = (stat.encoding, stat.num_urls)  # The charset ignored, as browsers ignore it.
        assert got == ("utf-8", 1), (
            "charset=no-such-codec is ignored: expected the encoding 'utf-8' and 1 link read,"
            f" got {got[0]!r} and {got[1]} links"
        )

    @level(2, "links")
    def test_num_urls_counts_distinct_links(self, pages: PageServer) -> None:
        root = pages.add_page("/", ["/a"] * 50 + ["/a#x", "/b", "/", "http://example.com/"])
        crawler = self.crawl([root])
        stat = first_record(crawler)
        got = (stat.num_urls, stat.num_new_urls)
        assert got == (3, 2), (
            "53 links to /a, /b and / on the site: expected 3 distinct links, 2 of them new,"
            f" got {got[0]} and {got[1]}"
        )

    @level(1, "fetching-one-url")
    def test_size_is_the_body_length(self, pages: PageServer) -> None:
        root = pages.add_page("/", body=b"x" * 12345, content_type="application/octet-stream")
        size = first_record(self.crawl([root])).size
        assert size == 12345, f"a body of 12345 bytes: expected the size 12345, got {size}"

    # --- What a crawler of one's own gets wrong -------------------------------------

    @level(4, "the-whole-crawl", "worker-bugs")
    def test_a_bug_on_one_url_neither_hangs_the_crawl_nor_loses_the_url(
        self, pages: PageServer
    ) -> None:
        # A worker that skips task_done() when the handling raises leaves
        # join() waiting for ever; one that swallows the error loses the URL.
        stage_crawler: Any = self.stage.Crawler

        class BuggyCrawler(stage_crawler):
            """A crawler with a bug in handling one URL's answer."""

            def handle_response(self, url: str, *args: Any, **kwargs: Any) -> Any:
                if url.endswith("/bug"):
                    raise ZeroDivisionError("a bug while handling /bug")
                return super().handle_response(url, *args, **kwargs)

        root = pages.add_page("/", ["/bug", "/a", "/b"])
        for path in ["/bug", "/a", "/b"]:
            pages.add_page(path, ["/c"])
        crawler = BuggyCrawler([root], max_tasks=2)
        why = ": a URL whose handling raised stopped a worker, or join() waits for it"
        try:
            run_with_deadline(lambda: self.stage.run(crawler), TIMEOUT_SLACK, why)
        except ZeroDivisionError as error:
            pytest.fail(
                f"a bug while handling one URL ({error!r}) ended the whole crawl: record it"
                " as that URL's outcome (record_crash) and go on"
            )
        recorded = set(by_url(crawler))
        expected = {root} | {pages.url + p for p in "abc"} | {pages.url + "bug"}
        assert recorded == crawler.seen_urls == expected, (
            "a URL was lost: expected /, /a, /b, /c and /bug seen and recorded; the URLs"
            f" recorded {differ(recorded, expected)}, the URLs seen"
            f" {differ(crawler.seen_urls, expected)}"
        )
        bug = record_of(crawler, pages.url + "bug")
        assert (bug.status, type(bug.exception)) == (None, ZeroDivisionError), (
            "the URL whose handling raised is recorded as a failure with that error:"
            f" expected no status and a ZeroDivisionError, got {bug.status} and {bug.exception!r}"
        )
        assert len(crawler.done) == 5, (
            f"each URL is recorded once: expected 5 records, got {len(crawler.done)}"
            f"{recorded_twice(crawler)}"
        )

    @level(4, "entry-points", "sockets")
    def test_sockets_are_closed_on_every_error_path(self, pages: PageServer) -> None:
        async def stalls(request: web.Request) -> web.StreamResponse:
            response = web.StreamResponse(headers={"Content-Type": "text/html"})
            await response.prepare(request)
            await response.write(b"<p>the rest never comes")
            end = asyncio.get_running_loop().time() + DEADLINE
            # Until the crawler hangs up, so that this side's socket closes too.
            while request.transport is not None and not request.transport.is_closing():
                if asyncio.get_running_loop().time() > end:
                    break
                await asyncio.sleep(0.02)
            return response

        pages.add_handler("/dropped", drop_connection)
        pages.add_handler("/stalls", stalls)
        pages.add_page("/too-big", body=b"<p>" + b"x" * 5000 + b"</p>")
        with refused_port() as refused, ScriptedServer(answer(b"NOT HTTP\r\n\r\n")) as garbage:
            links = ["/dropped", "/stalls", "/too-big", "/missing", refused, garbage.url]
            root = pages.add_page("/", links)
            options = {"max_tries": 2, "timeout": 0.5, "max_size": 1000}
            self.crawl([root], **options)  # Warm up: imports and caches open what they keep.
            gc.collect()  # What an earlier test left to the collector is not this crawl's.
            before = open_fds()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                crawler = self.crawl([root], **options)
                statuses = {stat.url: stat.status for stat in crawler.done}
                del crawler  # With its exceptions, and what their tracebacks hold.
                gc.collect()
            after = wait_for_fds(before)
        assert len(statuses) == 7, (
            f"a page and its 6 links that fail each their own way: expected 7 records, got"
            f" {statuses}"
        )
        leaked = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
        assert leaked == [], (
            f"every socket is closed on every error path: expected no ResourceWarning, got {leaked}"
        )
        assert after <= before, (
            f"every socket is closed on every error path: expected none left open, got"
            f" {after - before}"
        )

    # 429 and 503 ask the crawler to come back: see tests/revisit_acceptance.py.
    @pytest.mark.parametrize("status", [400, 403, 404, 410, 500, 502])
    @level(4, "fetching-one-url")
    def test_error_statuses_are_recorded_not_retried(self, pages: PageServer, status: int) -> None:
        root = pages.add_page("/", ["/never"], status=status)
        crawler = self.crawl([root])
        records = [s[:3] for s in crawler.done]
        assert records == [(root, None, status)], f"expected one record, got {records}"
        asked = pages.requests["/"]
        assert asked == 1, f"a {status} is an answer, asked once: the server got {asked} requests"

    @level(4, "fetching-one-url", "counted-tries")
    def test_dropped_connections_are_retried(self, pages: PageServer, logs) -> None:
        tries = 0

        async def flaky(request: web.Request) -> web.StreamResponse:
            nonlocal tries
            tries += 1
            if tries <= 2:
                return await drop_connection(request)
            return web.Response(body=b"")

        root = pages.add_handler("/", flaky)
        crawler = self.crawl([root])
        records = [s[:3] for s in crawler.done]
        assert records == [(root, None, 200)], (
            f"two dropped connections, then an answer: expected one record with status 200,"
            f" got {records}"
        )
        asked = pages.requests["/"]
        assert asked == 3, f"expected 3 requests (2 dropped, 1 answered), the server got {asked}"
        for line in [f"try 0 for {root} raised", f"try 1 for {root} raised"]:
            check_logged(logs, line, self.stage.__name__)
        line = f"try 2 for {root} success"
        check_logged(logs, line, self.stage.__name__)

    @level(4, "fetching-one-url", "counted-tries")
    def test_failure_after_max_tries(self, pages: PageServer, logs) -> None:
        root = pages.add_handler("/", drop_connection)
        crawler = self.crawl([root], max_tries=3)
        assert len(crawler.done) == 1, f"expected 1 record of the URL, got {records(crawler)}"
        stat = first_record(crawler)
        got = (stat.url, stat.status, stat.size, stat.next_url)
        assert got == (root, None, 0, None), (
            "a URL that failed every try: expected (url, status, size, next_url)"
            f" {(root, None, 0, None)}, got {got}"
        )
        assert isinstance(stat.exception, Exception), (
            f"a failure is recorded with its exception: expected one, got {stat.exception!r}"
        )
        asked = pages.requests["/"]
        assert asked == 3, f"max_tries=3: expected 3 requests, the server got {asked}"
        for line in [f"{root} failed after 3 tries", f"try 2 for {root} raised"]:
            check_logged(logs, line, self.stage.__name__)

    @level(4, "fetching-one-url", "counted-tries")
    def test_single_try(self, pages: PageServer, logs) -> None:
        root = pages.add_handler("/", drop_connection)
        crawler = self.crawl([root], max_tries=1)
        stat = first_record(crawler)
        assert stat.status is None, (
            f"a dropped connection is a failure: expected no status, got {stat.status}"
        )
        check_logged(logs, f"{root} failed after 1 tries", self.stage.__name__)

    @level(4, "fetching-one-url")
    def test_refused_connection_is_a_recorded_failure(self) -> None:
        with refused_port() as url:
            crawler = self.crawl([url], max_tries=2)
        assert records(crawler) == [(url, None, None)], (
            "a refused connection: expected one failure, no status and no next_url, got"
            f" {records(crawler)}"
        )
        error = first_record(crawler).exception
        assert isinstance(error, Exception), (
            f"a failure is recorded with its exception, not {error!r}"
        )

    # A server that never answers, a body that never ends, and a timeout
    # that ends a later request: in simulated time, tests/sim_acceptance.py.

    @pytest.mark.parametrize(
        "response",
        [
            b"THIS IS NOT HTTP\r\n\r\n",
            b"HTTP/1.0 200 OK\r\nContent-Length: 100\r\n\r\nonly part of it",
            b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n",
        ],
        ids=["garbage", "short-body", "no-blank-line"],
    )
    @level(4, "fetching-one-url", "counted-tries")
    def test_malformed_response_is_a_network_failure(self, response: bytes) -> None:
        with ScriptedServer(answer(response)) as server:
            crawler = self.crawl([server.url], max_tries=2)
        records = [s[:3] for s in crawler.done]
        assert records == [(server.url, None, None)], f"expected one failure, got {records}"
        error = first_record(crawler).exception
        assert isinstance(error, Exception), (
            f"a failure is recorded with its exception, not {error!r}"
        )
        tries = len(server.requests)  # One connection per try.
        assert tries == 2, f"a malformed answer is a failed try: max_tries=2, {tries} were made"

    @level(4, "fetching-one-url")
    def test_endless_body_is_cut_at_max_size(self, pages: PageServer) -> None:
        async def endless(request: web.Request) -> web.StreamResponse:
            response = web.StreamResponse(headers={"Content-Type": "text/html"})
            await response.prepare(request)
            chunk = b'<a href="/next">next</a>' * 1000
            for _ in range(10_000):  # Bounded: about 250 MB at the most.
                await response.write(chunk)
            return response

        root = pages.add_handler("/", endless)
        crawler = self.crawl([root], max_size=100_000)
        stat = first_record(crawler)
        got = (stat.url, stat.status, stat.size, stat.num_urls)
        expected = (root, 200, 100_000, 0)
        assert got == expected, (
            "an endless body with max_size=100000: expected it cut and its links not read,"
            f" (url, status, size, links) {expected}, got {got}"
        )
        assert isinstance(stat.exception, Exception) and "100000" in str(stat.exception), (
            "a body cut at max_size is recorded with an error naming 100000,"
            f" not {stat.exception!r}"
        )
        assert len(crawler.done) == 1, f"expected 1 record, got {records(crawler)}"

    @level(4, "fetching-one-url", "https")
    def test_https_is_fetched_over_tls_with_its_certificate_checked(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        script = answer(http_response(b"<p>over TLS</p>"))
        with ScriptedServer(script, tls=server_tls()) as server:
            untrusted = self.crawl([server.url], max_tries=1)
            trust_the_test_authority(monkeypatch)
            crawler = self.crawl([server.url], max_tries=1)
        assert records(crawler) == [(server.url, None, 200)], (
            f"an https page whose certificate verifies: expected one record of {server.url}"
            f" with status 200, got {outcomes(crawler)}"
        )
        stat = first_record(untrusted)
        error = stat.exception
        verified = isinstance(error, ssl.SSLCertVerificationError) or (
            isinstance(error, ssl.SSLError) and error.reason == "CERTIFICATE_VERIFY_FAILED"
        )
        assert stat.status is None and verified, (
            "an https page whose certificate is signed by an authority nobody trusts: expected"
            " a failure with ssl.SSLCertVerificationError (or an error built on it), got"
            f" {outcomes(untrusted)}"
        )

    @level(4, "fetching-one-url")
    def test_body_of_exactly_max_size_is_not_cut(self, pages: PageServer) -> None:
        root = pages.add_page("/", body=b"<p>" + b"x" * 93 + b"</p>")
        stat = first_record(self.crawl([root], max_size=100))
        assert (stat.size, stat.exception) == (100, None), (
            "a body of exactly max_size=100: expected it whole and no error, got the size"
            f" {stat.size} and {stat.exception!r}"
        )

    # --- The whole crawl ---------------------------------------------------------

    # The whole site, served by aiohttp.web and by stage 2's own HTTP server.

    @pytest.mark.parametrize("server", SERVERS)
    @pytest.mark.parametrize(
        ("size", "max_tasks"),
        [(10, 1), (60, 3), pytest.param(300, 10, marks=SLOW), pytest.param(1000, 50, marks=SLOW)],
    )
    @level(4, "the-whole-crawl", "many-at-once")
    def test_full_crawl_matches_the_oracle(self, server: str, size: int, max_tasks: int) -> None:
        with site_server(server, size) as site:
            crawler = self.crawl([site.url], max_tasks=max_tasks)
            requests = site.site.counters.requests
        expected = expected_results(site.url, size)
        assert results(crawler) == expected, (
            f"the test site of {size} pages: the records (url, status, next_url)"
            f" {differ(results(crawler), expected)}"
        )
        recorded = {stat.url for stat in crawler.done}
        assert recorded == crawler.seen_urls, (
            f"every URL seen is recorded: the URLs recorded {differ(recorded, crawler.seen_urls)}"
        )
        assert len(crawler.done) == len(crawler.seen_urls), (
            f"each URL is recorded once: expected {len(crawler.seen_urls)} records, one per URL"
            f" seen, got {len(crawler.done)}{recorded_twice(crawler)}"
        )
        twice = {path for path, count in requests.items() if count > 1}
        assert not twice, f"a URL was requested more than once: {some(twice)}"

    @pytest.mark.parametrize("server", SERVERS)
    @pytest.mark.parametrize("max_redirect", [0, 1, 2, 3])
    @level(4, "fetching-one-url", "redirects")
    def test_full_crawl_with_max_redirect(self, server: str, max_redirect: int) -> None:
        with site_server(server, 20) as site:
            crawler = self.crawl([site.url], max_redirect=max_redirect)
        expected = expected_results(site.url, 20, max_redirect)
        assert results(crawler) == expected, (
            f"the test site with max_redirect={max_redirect}: the records (url, status, next_url)"
            f" {differ(results(crawler), expected)}"
        )

    # How many fetches run at once, at most and at least: in simulation,
    # tests/sim_acceptance.py (test_max_tasks_is_reached_and_never_exceeded).

    @level(3, "the-whole-crawl")
    def test_max_tasks_with_few_urls(self, pages: PageServer) -> None:
        async def slow(request: web.Request) -> web.StreamResponse:
            await asyncio.sleep(0.05)
            return web.Response(body=b"")

        for path in ["/0", "/1", "/2"]:
            pages.add_handler(path, slow)
        home = pages.add_page("/", ["/0", "/1", "/2"])
        crawler = self.crawl([home], max_tasks=2)
        most = pages.max_in_flight
        assert most == 2, f"max_tasks=2 and 3 slow links: {most} requests at once, not 2"
        assert len(crawler.done) == 4, f"expected 4 records, got {len(crawler.done)}"

    @level(2, "the-whole-crawl")
    def test_many_roots(self, pages: PageServer) -> None:
        roots = [pages.add_page(f"/{n}", []) for n in range(30)]
        crawler = self.crawl(roots + roots[:5], max_tasks=4)
        recorded = {stat.url for stat in crawler.done}
        assert recorded == set(roots), f"30 roots: the URLs recorded {differ(recorded, set(roots))}"
        records = len(crawler.done)
        assert records == 30, (
            f"30 roots, 5 of them given twice: expected 30 records, got {records}"
            f"{recorded_twice(crawler)}"
        )

    @level(2, "the-whole-crawl")
    def test_root_without_a_host_does_not_stop_the_crawl(self, pages: PageServer) -> None:
        root = pages.add_page("/", [])
        crawler = self.crawl(["not-a-host", root])
        assert (root, 200, None) in results(crawler), (
            f"a root without a host beside a good one: expected {root} fetched with status 200,"
            f" got {records(crawler)}"
        )
        urls = [stat.url for stat in crawler.done]
        assert len(set(urls)) == len(urls), f"each root is recorded once, not {urls}"

    @level(4, "reporting", "report")
    def test_report_lists_every_url(self, pages: PageServer, tmp_path) -> None:
        root = pages.add_page("/", ["/a", "/b"])
        pages.add_redirect("/a", "/c")
        crawler = self.crawl([root])
        with open(tmp_path / "report.txt", "w") as file:
            report(crawler, file)
        text = (tmp_path / "report.txt").read_text()
        assert re.search(r"^Finished 4 urls in [\d.]+ secs \(max_tasks=10\)", text, re.M), (
            f"the report starts 'Finished 4 urls in N secs (max_tasks=10)'; it was:\n{text}"
        )
        for url in crawler.seen_urls:
            assert re.search(f"^{re.escape(url)} ", text, re.M), (
                f"the report has a line for each URL seen; {url} has none:\n{text}"
            )
        assert "Todo: 0" in text and "Done: 4" in text, (
            f"the report ends with 'Todo: 0' and 'Done: 4'; it was:\n{text}"
        )


class TaskGroupTests:
    """For the stages whose workers run in a task group (2 and 3), with ``stage`` set."""

    stage: types.ModuleType

    @level(4, "the-whole-crawl", "task-groups")
    def test_a_worker_that_dies_of_a_bug_ends_the_crawl_with_its_error(
        self, pages: PageServer
    ) -> None:
        # Before the task group, the dead worker's error was gathered and
        # dropped, and the crawl went on with one worker fewer (or hung in
        # join() once none was left).
        stage_crawler: Any = self.stage.Crawler

        class DyingWorkerCrawler(stage_crawler):
            """A crawler whose bug is in recording a bug: the worker itself dies."""

            def parse_links(self, url: str, response: Any) -> Any:
                raise ZeroDivisionError("a bug in the link parser")

            def record_crash(self, url: str, error: Exception) -> None:
                raise RuntimeError("a bug in record_crash")

        root = pages.add_page("/", ["/a"])
        crawler = DyingWorkerCrawler([root], max_tasks=2)
        with pytest.raises(ExceptionGroup) as raised:
            run_with_deadline(lambda: self.stage.run(crawler))
        assert raised.group_contains(RuntimeError, match="a bug in record_crash"), (
            "a worker that died in record_crash: expected its RuntimeError ('a bug in"
            f" record_crash') among the crawl's errors, got {raised.value!r}"
        )


class SharedRobotsTests:
    """For the stages whose workers share one robots.txt task per host (2 and 3).

    A subclass sets ``stage``, and ``lib``: the module or namespace with
    the stage's ``run``, ``create_task``, ``sleep``, ``get_running_loop``
    and ``CancelledError``.
    """

    stage: types.ModuleType
    lib: Any

    def test_a_cancelled_waiter_leaves_the_robots_fetch_to_the_others(self) -> None:
        # Awaited directly, the shared task was cancelled with the first
        # waiter, and every other worker of the host got CancelledError.
        lib = self.lib
        rules = RobotsRules.allow_all()
        stage_crawler: Any = self.stage.Crawler

        class HeldRobotsCrawler(stage_crawler):
            """A crawler whose robots.txt arrives when the test says so."""

            released: Any = None  # A future of the running loop.
            fetches = 0

            async def fetch_robots(self, host: Any) -> RobotsRules:
                self.fetches += 1
                await self.released
                return rules

        url = "http://robots.test/page"
        crawler = HeldRobotsCrawler([url])

        async def main() -> tuple[Any, Any]:
            crawler.released = lib.get_running_loop().create_future()
            first = lib.create_task(crawler.robots_of(url))
            second = lib.create_task(crawler.robots_of(url))
            for _ in range(3):  # Both wait for the one fetch now.
                await lib.sleep(0)
            first.cancel()
            for _ in range(3):
                await lib.sleep(0)
            if not crawler.released.done():  # Else the cancellation reached the fetch.
                crawler.released.set_result(None)
            for _ in range(3):
                await lib.sleep(0)
            return first, second

        first, second = run_with_deadline(lambda: lib.run(main()))
        why = "two waiters share one robots.txt fetch and the first is cancelled"
        assert first.cancelled(), f"{why}: expected the first waiter cancelled, got {first}"
        assert not second.cancelled(), (
            f"{why}: expected the second waiter left alone, yet it was cancelled too"
        )
        assert second.done() and second.exception() is None, (
            f"{why}: expected the second waiter to get the rules, without an error, got {second}"
        )
        assert crawler.fetches == 1, (
            f"{why}: expected robots.txt fetched once, got {crawler.fetches} fetches"
        )
        kept = crawler.polite.host(url).rules
        assert kept is rules, f"{why}: expected the host to keep the fetched rules, got {kept}"

    def test_a_stopped_crawl_cancels_the_robots_fetch_it_left(self) -> None:
        # Shielded, the fetch no longer ends with the last worker waiting
        # for it: the crawl stops it itself, before its connections close.
        lib = self.lib
        stage_crawler: Any = self.stage.Crawler

        class NeverRobotsCrawler(stage_crawler):
            """A crawler whose robots.txt never arrives."""

            async def fetch_robots(self, host: Any) -> RobotsRules:
                await lib.get_running_loop().create_future()
                raise AssertionError("unreachable")

        crawler = NeverRobotsCrawler(["http://robots.test/"], obey_robots=True)

        async def main() -> bool:
            crawling = lib.create_task(crawler.crawl())
            while not crawler.robots_fetches:
                await lib.sleep(0)
            await lib.sleep(0)  # The worker waits for the fetch now.
            crawling.cancel()
            with contextlib.suppress(lib.CancelledError):
                await crawling
            for _ in range(3):  # The fetch takes its cancellation, if it got one.
                await lib.sleep(0)
            fetches = list(crawler.robots_fetches.values())
            assert len(fetches) == 1, f"expected one robots.txt fetch left, got {fetches}"
            return fetches[0].cancelled()  # Now: run() would cancel it anyway, later.

        assert run_with_deadline(lambda: lib.run(main())) is True, (
            "a crawl cancelled while a worker waits for robots.txt: expected the crawl to"
            " cancel the fetch it left, yet the fetch was not cancelled"
        )
