"""Stage 3's shared frontier (``crawl --frontier``) against a real Valkey server.

Crawlers run as separate processes (``python -m stage3_asyncio``), as they
would on separate machines, all crawling one test site served from this
process, whose counters see every request of every crawler.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import signal
import socket
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from shared.cli.main import main
from shared.record.report import stat_to_json
from shared.record.stats import FetchStatistic
from shared.testsite.server import ServerThread, make_app
from shared.testsite.site import expected_results
from stage3_asyncio import frontier as frontier_module
from tests.servers import PageServer
from tests.valkey import ValkeyServer, valkey_binary

PAGES = 30  # A small site: about a hundred URLs.
DEADLINE = 60.0  # Seconds for a crawl to end; never reached when all is well.


@pytest.fixture(scope="session")
def valkey(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ValkeyServer]:
    """One Valkey server for the whole run, on a Unix socket in a temporary directory."""
    valkey_binary()  # Skips (or fails under CI) where no server can run.
    with ValkeyServer(tmp_path_factory.mktemp("valkey")) as server:
        yield server


@pytest.fixture(scope="session")
def databases() -> Iterator[int]:
    """Database numbers, one per test, so that no two tests share a crawl."""
    return itertools.count(1)


@pytest.fixture
def frontier(valkey: ValkeyServer, databases: Iterator[int]) -> str:
    """The URL of an empty frontier of this test's own."""
    return valkey.url(next(databases))


def start(frontier: str, root: str, *options: object) -> subprocess.Popen[str]:
    """Start one crawler process on ``frontier``."""
    command = [sys.executable, "-m", "stage3_asyncio", "-q", "--frontier", frontier, root]
    return subprocess.Popen(
        [*command, *map(str, options)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(processes: list[subprocess.Popen[str]]) -> list[tuple[int, str, str]]:
    """Wait for every process; return each one's exit status, stdout and stderr.

    A process still running after DEADLINE seconds is a hang: it is
    interrupted (as Ctrl-C would, so that it may say where it was), every
    process is stopped, and the test fails with what the hung one wrote.
    """
    results = []
    for process in processes:
        try:
            stdout, stderr = process.communicate(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGINT)
            try:
                _, stderr = process.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                _, stderr = process.communicate()
            for other in processes:
                if other.poll() is None:
                    kill(other)
            pytest.fail(f"a crawler ran on after {DEADLINE:g} s; it wrote:\n{stderr[-3000:]}")
        results.append((process.returncode, stdout, stderr))
    return results


def kill(process: subprocess.Popen[str]) -> None:
    """Kill ``process`` with SIGKILL: it gets no chance to tidy anything."""
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=DEADLINE)


def client(frontier: str) -> Any:
    """Return a plain (blocking) Redis client of ``frontier``, to look inside."""
    import redis

    return redis.Redis.from_url(frontier)


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Poll ``condition`` until it holds; fail after DEADLINE seconds."""
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.01)  # Polling with a deadline: the crawlers give no signal.


def records_in(frontier: str) -> int:
    """Return how many records the server holds."""
    count: int = client(frontier).llen("crawl:log")
    return count


def whole_crawl(frontier: str, path: Path) -> list[dict[str, Any]]:
    """Return every record of the crawl, as ``crawl --report --json`` writes them."""
    status = main(["-q", "--frontier", frontier, "--report", "--json", str(path)])
    assert status == 0
    return read_jsonl(path)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Return the records of a ``--json`` file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def results(records: list[dict[str, Any]]) -> set[tuple[str, int | None, str | None]]:
    """Return what the oracle compares: each URL's status and redirect target."""
    return {(record["url"], record["status"], record["next_url"]) for record in records}


def urls_fetched(records: list[dict[str, Any]]) -> int:
    """Return how many requests a crawl that fetched each URL once makes: robots.txt too."""
    return sum(record["status"] is not None for record in records) + 1


@pytest.mark.slow  # Three processes.
def test_three_processes_crawl_the_site_once(frontier: str, tmp_path: Path) -> None:
    with ServerThread(make_app(PAGES, latency=0.02)) as server:
        files = [tmp_path / f"crawler{number}.jsonl" for number in range(3)]
        crawlers = [start(frontier, server.url, "--max-tasks", 3, "--json", f) for f in files]
        assert [status for status, _, _ in finish(crawlers)] == [0, 0, 0]
        requests = dict(server.site.counters.requests)
    records = [record for path in files for record in read_jsonl(path)]
    urls = [record["url"] for record in records]
    assert len(urls) == len(set(urls))  # No URL recorded twice...
    assert results(records) == expected_results(server.url, PAGES, obey_robots=True)
    assert set(requests.values()) == {1}  # ...nor fetched twice, robots.txt included.
    assert sum(1 for path in files if read_jsonl(path)) >= 2  # They shared the work.
    whole = whole_crawl(frontier, tmp_path / "all.jsonl")
    assert sorted(whole, key=lambda r: r["url"]) == sorted(records, key=lambda r: r["url"])


@pytest.mark.slow  # Two processes, one killed.
def test_a_killed_process_leaves_its_urls_to_another(frontier: str, tmp_path: Path) -> None:
    with ServerThread(make_app(PAGES, latency=0.05)) as server:
        options = ["--max-tasks", 3, "--lease", 1]
        doomed, survivor = (
            start(frontier, server.url, *options),
            start(frontier, server.url, *options),
        )
        wait_for(lambda: records_in(frontier) >= 10, "ten records")
        kill(doomed)
        in_flight = client(frontier).zcard("crawl:leases")  # Leased when it died.
        assert finish([survivor])[0][0] == 0
        requests = dict(server.site.counters.requests)
    records = whole_crawl(frontier, tmp_path / "all.jsonl")
    assert len(records) == len({record["url"] for record in records})
    assert results(records) == expected_results(server.url, PAGES, obey_robots=True)
    fetched_twice = [path for path, count in requests.items() if count > 1]
    # Only a URL leased at the kill is fetched again: one being fetched, or
    # one fetched whose outcome was still on its way to the server.
    assert len(fetched_twice) <= in_flight


@pytest.mark.slow  # Four processes, two of them killed.
def test_a_crawl_goes_on_after_every_process_was_killed(frontier: str, tmp_path: Path) -> None:
    with ServerThread(make_app(PAGES, latency=0.05)) as server:
        options = ["--max-tasks", 3, "--lease", 1]
        first = [start(frontier, server.url, *options) for _ in range(2)]
        wait_for(lambda: records_in(frontier) >= 20, "twenty records")
        for process in first:
            kill(process)
        in_flight = client(frontier).zcard("crawl:leases")  # Leased when they died.
        assert 0 < records_in(frontier) < len(expected_results(server.url, PAGES))
        again = [start(frontier, server.url, *options) for _ in range(2)]
        assert [status for status, _, _ in finish(again)] == [0, 0]
        requests = sum(server.site.counters.requests.values())
    records = whole_crawl(frontier, tmp_path / "all.jsonl")
    assert results(records) == expected_results(server.url, PAGES, obey_robots=True)
    assert len(records) == len({record["url"] for record in records})
    assert requests <= urls_fetched(records) + in_flight


def stamped(app: web.Application, starts: list[tuple[float, bool]]) -> web.Application:
    """Return ``app``, noting when each request arrives (the site's own clock).

    Each is noted with whether it is the first on its connection.
    """
    connections: set[object] = set()

    @web.middleware
    async def stamp(request: web.Request, handler: Any) -> web.StreamResponse:
        starts.append((time.monotonic(), request.protocol not in connections))
        connections.add(request.protocol)
        return await handler(request)

    app.middlewares.append(stamp)
    return app


@pytest.mark.slow  # Three processes.
def test_delay_and_max_pages_hold_across_processes(frontier: str, tmp_path: Path) -> None:
    starts: list[tuple[float, bool]] = []
    delay, max_pages = 0.1, 12
    with ServerThread(stamped(make_app(PAGES, latency=0.01), starts)) as server:
        options = ["--delay", delay, "--max-pages", max_pages, "--max-tasks", 4]
        crawlers = [start(frontier, server.url, *options) for _ in range(3)]
        assert [status for status, _, _ in finish(crawlers)] == [0, 0, 0]
    records = whole_crawl(frontier, tmp_path / "all.jsonl")
    assert sum(record["status"] is not None for record in records) == max_pages
    assert len(starts) == max_pages + 1  # robots.txt too.
    # The server grants turns ``delay`` apart on its own clock; each request
    # then travels to the site, a trip that a busy machine can lengthen.  A
    # request held back shortens the gap after it (on a loaded machine, to
    # 0.015 s); the span is allowed one delay less, for the first.  One that
    # opens a connection travels longest (it connects first, in a process
    # that may have just started): the gaps after those are left out, and
    # one short gap is allowed.  Processes that ignored each other would send
    # requests together: most gaps short (5 to 7 of 9 when tried), and a
    # span near a third as long.
    starts.sort()
    gaps = [b - a for (a, opened), (b, _) in itertools.pairwise(starts) if not opened]
    assert sum(gap < delay / 2 for gap in gaps) <= 1, starts
    assert starts[-1][0] - starts[0][0] > (len(starts) - 2) * delay, starts


@pytest.mark.slow  # Three processes.
def test_max_per_host_holds_across_processes(frontier: str, tmp_path: Path) -> None:
    with ServerThread(make_app(PAGES, latency=0.05)) as server:
        options = ["--max-per-host", 2, "--max-tasks", 4, "--max-pages", 30]
        crawlers = [start(frontier, server.url, *options) for _ in range(3)]
        assert [status for status, _, _ in finish(crawlers)] == [0, 0, 0]
        assert server.site.counters.max_in_flight == 2  # Reached, never passed.


@pytest.mark.slow  # Two processes.
def test_a_429_holds_the_host_for_every_process(frontier: str, pages: PageServer) -> None:
    arrivals: list[tuple[float, str]] = []

    async def page(request: web.Request) -> web.StreamResponse:
        arrivals.append((time.monotonic(), request.path))
        if request.path == "/busy" and [path for _, path in arrivals].count("/busy") == 1:
            return web.Response(status=429, headers={"Retry-After": "1"})
        await asyncio.sleep(0.1)  # Long enough for the crawl to last past the hold.
        return web.Response(text="<p>page</p>", content_type="text/html")

    others = [f"/p{number}" for number in range(30)]
    root = pages.add_page("/", ["/busy", *others])
    for path in ["/busy", *others]:
        pages.add_handler(path, page)
    crawlers = [start(frontier, root, "--max-tasks", 3) for _ in range(2)]
    assert [status for status, _, _ in finish(crawlers)] == [0, 0]
    refused = next(when for when, path in arrivals if path == "/busy")
    during = [path for when, path in arrivals if refused + 0.2 < when < refused + 0.9]
    assert during == []  # Neither process asked the host anything meanwhile.
    assert [path for _, path in arrivals].count("/busy") == 2  # Tried again, once.


@pytest.mark.slow  # A server of its own, killed.
def test_a_server_gone_stops_the_crawl_and_keeps_its_records(tmp_path: Path) -> None:
    valkey = ValkeyServer(tmp_path, appendonly=True)
    with valkey, ServerThread(make_app(PAGES, latency=0.05)) as server:
        crawler = start(valkey.url(), server.url, "--max-tasks", 3, "--json", tmp_path / "a.jsonl")
        wait_for(lambda: records_in(valkey.url()) >= 10, "ten records")
        written = set(client(valkey.url()).hkeys("crawl:records"))
        assert valkey.process is not None
        valkey.process.kill()
        status, _, stderr = finish([crawler])[0]
    assert status == 1
    assert "went away" in stderr.splitlines()[-1], stderr
    assert len(read_jsonl(tmp_path / "a.jsonl")) >= len(written)
    with ValkeyServer(tmp_path, appendonly=True) as again:
        assert written <= set(client(again.url()).hkeys("crawl:records"))


# --- Bad input: one line, and the right exit status --------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["--frontier", "http://127.0.0.1:6379/", "http://127.0.0.1/"],
        ["--frontier", "127.0.0.1:6379", "http://127.0.0.1/"],
        ["--stage", "callbacks", "--frontier", "redis://127.0.0.1:1/0", "http://127.0.0.1/"],
        ["--stage", "generators", "--frontier", "redis://127.0.0.1:1/0", "http://127.0.0.1/"],
        ["--frontier", "redis://127.0.0.1:1/0", "--report", "http://127.0.0.1/"],
        ["--report"],
        ["--forget"],
        ["--frontier", "redis://127.0.0.1:1/0", "--lease", "0", "http://127.0.0.1/"],
        ["--frontier", "redis://127.0.0.1:1/0", "--max-attempts", "0", "http://127.0.0.1/"],
        ["--frontier", "redis://127.0.0.1:1/0", "--sitemaps", "http://127.0.0.1/"],
    ],
)
def test_bad_frontier_options_exit_2_before_anything(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit:
        main(argv)
    assert exit.value.code == 2
    assert len(capsys.readouterr().err.splitlines()) == 1


@pytest.mark.slow  # The client tries a few times before it gives up.
@pytest.mark.parametrize("place", ["redis://127.0.0.1:1/0", "unix:///nonexistent/valkey.sock"])
def test_an_unreachable_server_exits_1_with_one_line(
    place: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--frontier", place, "http://127.0.0.1:1/"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "cannot reach the frontier" in err[0], err


def test_forget_removes_a_finished_crawl_only(frontier: str) -> None:
    keys = client(frontier)
    keys.rpush("crawl:queue", "10 0 http://127.0.0.1/")
    assert main(["-q", "--frontier", frontier, "--forget"]) == 1  # Not finished.
    keys.delete("crawl:queue")
    keys.sadd("crawl:seen", "http://127.0.0.1/")
    assert main(["-q", "--frontier", frontier, "--forget"]) == 0
    assert keys.dbsize() == 0


@pytest.mark.slow  # The client tries a few times before it gives up.
def test_a_frontier_url_hides_its_password(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--frontier", "redis://:secret@127.0.0.1:1/0", "http://127.0.0.1:1/"]) == 1
    assert "secret" not in capsys.readouterr().err


def test_a_redirect_into_this_machine_is_recorded_once_without_a_request(
    frontier: str, pages: PageServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A PrivateAddress ends a frontier crawl's URL as it does the plain crawl's."""
    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        return real_getaddrinfo("127.0.0.1" if "public.example" in name else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)  # Names resolve to this machine.
    root = pages.url.replace("127.0.0.1", "public.example")
    secret = root.replace("public.example", "inside.public.example") + "secret"
    pages.add_redirect("/", secret)
    pages.add_page("/secret", [])
    assert main(["-q", "--frontier", frontier, "--lenient", "--max-tries", "2", root]) == 0
    records = {record["url"]: record for record in whole_crawl(frontier, tmp_path / "all.jsonl")}
    assert set(records) == {root, secret}
    # Its robots.txt comes first (the command obeys robots.txt), and is refused.
    assert records[secret]["exception"] == (
        "RobotsDisallowed: robots.txt unreachable (PrivateAddress: "
        "inside.public.example is at 127.0.0.1, not a public address)"
    )
    assert pages.requests["/secret"] == 0


# --- A store that loses the crawl, a URL that kills its crawler ---------------------


class Gate:
    """A page handler that holds each request until the test opens it.

    ``arrived`` is set when a request has come; ``opened`` lets it (and any
    later one) be answered, with ``links``.
    """

    def __init__(self, links: list[str] | None = None) -> None:
        self.arrived, self.opened = threading.Event(), threading.Event()
        self.links = links or []

    async def __call__(self, request: web.Request) -> web.StreamResponse:
        self.arrived.set()
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self.opened.wait, DEADLINE)
        body = "".join(f'<a href="{link}"></a>' for link in self.links)
        return web.Response(text=body, content_type="text/html")

    def wait(self) -> None:
        """Wait until a request has come; fail after DEADLINE seconds."""
        assert self.arrived.wait(DEADLINE), "no request came"


def page(url: str, size: int = 0) -> FetchStatistic:
    """Return the record of an HTML page at ``url`` with no links."""
    return FetchStatistic(
        url=url, next_url=None, status=200, exception=None, size=size,
        content_type="text/html", encoding="utf-8", num_urls=0, num_new_urls=0,
    )  # fmt: skip


def last_line(stderr: str) -> str:
    """Return the last line a process wrote on stderr."""
    return stderr.strip().splitlines()[-1]


@pytest.mark.slow  # A process of its own.
def test_a_flushed_store_stops_the_crawl_with_status_4(frontier: str, pages: PageServer) -> None:
    gate = Gate(["/next"])
    root = pages.add_handler("/", gate)
    pages.add_page("/next")
    crawler = start(frontier, root, "--max-tasks", 1)
    gate.wait()
    client(frontier).flushdb()  # Or a rollback, an eviction, a --forget.
    gate.opened.set()
    status, _, stderr = finish([crawler])[0]
    assert status == 4, stderr
    assert "the crawl is no longer in the frontier" in last_line(stderr), stderr
    assert "what was recorded there is kept" not in stderr  # Nothing is, there.
    assert pages.requests["/next"] == 0  # Its link went nowhere: the crawl stopped.


def dump(frontier: str) -> dict[bytes, bytes]:
    """Return a copy of every key of ``frontier``: a snapshot."""
    keys = client(frontier)
    return {key: keys.dump(key) for key in keys.scan_iter()}


def restore(frontier: str, snapshot: dict[bytes, bytes]) -> None:
    """Put the store back as it was in ``snapshot``, in one transaction.

    A crawler polls the store while this runs: done key by key, it could
    find the store empty halfway and rightly say it was flushed.
    """
    with client(frontier).pipeline(transaction=True) as keys:
        keys.flushdb()
        for key, value in snapshot.items():
            keys.restore(key, 0, value)
        keys.execute()


@pytest.mark.slow  # A process of its own.
def test_a_store_rolled_back_stops_the_crawl_with_status_4(
    frontier: str, pages: PageServer
) -> None:
    first, second = Gate(["/a", "/b"]), Gate()
    root = pages.add_handler("/", first)
    pages.add_handler("/a", second)
    pages.add_page("/b")
    crawler = start(frontier, root, "--max-tasks", 1, "--lease", 60)
    first.wait()
    snapshot = dump(frontier)  # Taken while the root is fetched...
    first.opened.set()
    second.wait()
    restore(frontier, snapshot)  # ...and restored once its links were sent.
    second.opened.set()
    status, _, stderr = finish([crawler])[0]
    assert status == 4, stderr
    assert "went back to an older copy" in last_line(stderr), stderr


def test_a_worker_cancelled_as_its_command_is_written_stops(
    frontier: str, pages: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The courier's step fails just as a worker's command to the server is written.

    The race behind a hang of the test above: the courier's step came back
    CrawlLost in the same turn of the loop as a worker's write to the server
    ended, so the task group's one cancel of that worker came while
    redis-py's ``wait_for`` returned.  On Python 3.11 it returned normally;
    the worker fetched its page and waited for a URL from a courier that
    was gone.  Here the courier's step is held, and answered from inside the
    worker's write, which makes that timing certain.
    """
    root = pages.add_page("/")
    crawler = frontier_module.FrontierCrawler(root, frontier=frontier, max_tasks=1, max_per_host=1)
    holding, armed = asyncio.Event(), asyncio.Event()
    answer: asyncio.Future[Any] | None = None
    real_step, real_turn = frontier_module.Frontier.step, frontier_module.Frontier.turn
    real_drain = asyncio.StreamWriter.drain

    async def step(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not crawler.leased:  # The first step, which leases the root.
            return await real_step(self, *args, **kwargs)
        holding.set()
        assert answer is not None
        return await answer  # On its way back from the server, until...

    async def turn(self: Any, *args: Any) -> Any:
        await holding.wait()
        armed.set()
        return await real_turn(self, *args)  # The worker asks for its turn at the host.

    async def drain(self: asyncio.StreamWriter) -> None:
        await real_drain(self)
        if armed.is_set() and answer is not None and not answer.done():
            answer.set_exception(crawler.frontier.lost("the store went back"))  # ...now.

    monkeypatch.setattr(frontier_module.Frontier, "step", step)
    monkeypatch.setattr(frontier_module.Frontier, "turn", turn)
    monkeypatch.setattr(asyncio.StreamWriter, "drain", drain)

    async def crawl() -> BaseException | None:
        nonlocal answer
        answer = asyncio.get_running_loop().create_future()
        crawling = asyncio.create_task(crawler.crawl())
        await asyncio.wait([crawling], timeout=DEADLINE)
        if not crawling.done():  # A hang: stop every task, then fail.
            for task in asyncio.all_tasks() - {crawling, asyncio.current_task()}:
                task.cancel()
            await asyncio.wait([crawling])
            assert answer.done(), "the worker's write was never seen: redis-py changed?"
            pytest.fail(f"the crawl ran on after {DEADLINE:g} s ({crawling!r})")
        return crawling.exception()

    error = asyncio.run(crawl())
    assert isinstance(error, frontier_module.CrawlLost), repr(error)
    assert pages.requests["/"] == 0  # The worker stopped at once, as asked.


@pytest.mark.parametrize("turns", range(4))
def test_a_courier_cancelled_as_its_nap_ends_stops(turns: int) -> None:
    """A cancel that comes ``turns`` turns of the loop after a worker's news is kept.

    On Python 3.11 a nap on ``asyncio.wait_for`` lost a cancel that came as
    its wait ended: a courier asked to stop went on.
    """

    async def nap() -> tuple[bool, bool]:
        crawler = frontier_module.FrontierCrawler(
            "http://127.0.0.1/", frontier="redis://127.0.0.1:1/0"
        )
        napping = asyncio.create_task(crawler.nap(DEADLINE))
        await asyncio.sleep(0)  # A turn of the loop: it naps.
        crawler.wake.set()
        for _ in range(turns):
            await asyncio.sleep(0)
        asked = napping.cancel()  # False: it had ended before.
        await asyncio.wait([napping])
        return asked, napping.cancelled()

    asked, cancelled = asyncio.run(nap())
    assert cancelled == asked


def run_frontier(url: str, coroutine: Callable[[Any], Any]) -> Any:
    """Run ``coroutine(frontier)`` on a Frontier at ``url`` that joined a crawl."""

    async def joined() -> Any:
        server = frontier_module.Frontier(url)
        try:
            await server.join(time.time(), "test")
            return await coroutine(server)
        finally:
            await server.close()

    return asyncio.run(joined())


def test_the_settings_that_can_lose_a_crawl_are_named(tmp_path: Path) -> None:
    async def problems(server: Any) -> list[str]:
        found: list[str] = await server.settings_problems()
        return found

    with ValkeyServer(tmp_path, appendonly=True) as valkey:
        assert run_frontier(valkey.url(), problems) == []
        client(valkey.url()).config_set("appendonly", "no")
        client(valkey.url()).config_set("maxmemory-policy", "allkeys-lru")
        found = run_frontier(valkey.url(), problems)
        assert len(found) == 2, found
        assert "appendonly no" in found[0] and "allkeys-lru" in found[1], found


@pytest.mark.slow  # A process of its own.
def test_settings_that_cannot_be_read_are_said_once(tmp_path: Path, pages: PageServer) -> None:
    root = pages.add_page("/", ["/a"])
    pages.add_page("/a")
    with ValkeyServer(tmp_path) as valkey:
        acl = ["SETUSER", "crawler", "on", ">secret", "~*", "&*", "+@all", "-config"]
        client(valkey.url()).execute_command("ACL", *acl)
        url = f"unix://crawler:secret@{valkey.socket}?db=0"
        command = [sys.executable, "-m", "stage3_asyncio", "--frontier", url, root]
        done = subprocess.run(command, capture_output=True, text=True, timeout=DEADLINE)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "cannot read the settings" in line]
    assert len(said) == 1, done.stderr
    assert "appendonly yes" in said[0] and "noeviction" in said[0]


@pytest.mark.slow  # Three processes, two of them killed.
def test_a_url_that_kills_every_crawler_is_given_up(
    frontier: str, pages: PageServer, tmp_path: Path
) -> None:
    crawlers: list[subprocess.Popen[str]] = []

    async def deadly(request: web.Request) -> web.StreamResponse:
        crawlers[-1].kill()  # As a parser crash or running out of memory would.
        return web.Response(text="<p>too late</p>", content_type="text/html")

    root = pages.add_page("/", ["/deadly"])
    pages.add_handler("/deadly", deadly)
    options = ["--max-tasks", 1, "--lease", 0.5, "--max-attempts", 2]
    statuses = []
    while not statuses or statuses[-1] < 0 and len(statuses) < 4:
        crawlers.append(start(frontier, root, *options))
        statuses.append(finish(crawlers[-1:])[0][0])
    assert statuses == [-signal.SIGKILL, -signal.SIGKILL, 0]
    assert pages.requests["/deadly"] == 2  # Tried twice, then given up.
    records = {record["url"]: record for record in whole_crawl(frontier, tmp_path / "all.jsonl")}
    deadly_record = records[root + "deadly"]
    assert deadly_record["status"] is None
    assert deadly_record["exception"].startswith("GivenUp: given up after 2 leases ran out")


def test_a_lua_error_stops_the_crawl_with_one_line(
    frontier: str, pages: PageServer, capsys: pytest.CaptureFixture[str]
) -> None:
    client(frontier).set("crawl:queue", "not a list")  # A key another program wrote.
    root = pages.add_page("/")
    assert main(["-q", "--frontier", frontier, root]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "refused a step" in err[0], err
    assert "WRONGTYPE" in err[0], err


@pytest.mark.slow  # A process of its own.
def test_the_politeness_a_crawl_keeps_in_the_server_expires(
    frontier: str, pages: PageServer, tmp_path: Path
) -> None:
    root = pages.add_page("/", ["/a", "/b"])
    pages.add_page("/a")
    pages.add_page("/b")
    options = ["--max-per-host", 1, "--delay", 0.01, "--json", tmp_path / "a.jsonl"]
    assert finish([start(frontier, root, *options)])[0][0] == 0
    keys = client(frontier)
    kept = {key.decode() for key in keys.scan_iter() if keys.pttl(key) == -1}
    # What a finished crawl keeps for good: no entry per host but its robots.txt.
    names = ["seen", "records", "log", "robots", "meta", "pages"]
    assert kept <= {"crawl:" + name for name in names}, kept
    assert len(read_jsonl(tmp_path / "a.jsonl")) == 3


@pytest.mark.slow  # A process of its own.
def test_a_page_recorded_by_another_process_first_is_not_counted_twice(
    frontier: str, pages: PageServer, tmp_path: Path
) -> None:
    async def late(request: web.Request) -> web.StreamResponse:
        # Another process, whose lease on this URL ran out, records it just now.
        record = stat_to_json(page(str(request.url), size=1))
        keys = client(frontier)
        keys.hset("crawl:records", str(request.url), json.dumps(record))
        keys.rpush("crawl:log", str(request.url))
        return web.Response(text="<p>mine</p>", content_type="text/html")

    root = pages.add_page("/", ["/late"])
    pages.add_handler("/late", late)
    assert finish([start(frontier, root, "--json", tmp_path / "a.jsonl")])[0][0] == 0
    mine = {record["url"] for record in read_jsonl(tmp_path / "a.jsonl")}
    assert mine == {root}  # /late is the other process's page.
    records = whole_crawl(frontier, tmp_path / "all.jsonl")
    assert [record["size"] for record in records if record["url"].endswith("/late")] == [1]


@pytest.mark.slow  # A process of its own.
def test_a_url_recorded_while_it_waited_in_the_queue_is_not_fetched(
    frontier: str, pages: PageServer
) -> None:
    root, done = pages.add_page("/", ["/done"]), pages.add_page("/done")
    keys = client(frontier)
    # Its lease ran out and put it back in the queue; then the outcome of
    # the process that held it arrived.
    keys.sadd("crawl:seen", done)
    keys.rpush("crawl:queue", f"10 0 {done}")
    keys.hset("crawl:records", done, json.dumps(stat_to_json(page(done))))
    keys.rpush("crawl:log", done)
    assert finish([start(frontier, root)])[0][0] == 0
    assert pages.requests["/done"] == 0


@pytest.mark.slow  # A process of its own.
def test_forget_waits_for_every_process_at_work(frontier: str, pages: PageServer) -> None:
    gate = Gate()
    root = pages.add_handler("/", gate)
    crawler = start(frontier, root, "--max-tasks", 1)
    gate.wait()
    keys = client(frontier)
    # Its lease ran out and another process recorded the page: nothing is
    # queued or leased, but this process is still at work.
    keys.delete("crawl:leases", "crawl:leased")
    keys.hset("crawl:records", root, json.dumps(stat_to_json(page(root))))
    keys.rpush("crawl:log", root)
    assert main(["-q", "--frontier", frontier, "--forget"]) == 1
    assert keys.exists("crawl:meta")
    gate.opened.set()
    assert finish([crawler])[0][0] == 0
    assert main(["-q", "--frontier", frontier, "--forget"]) == 0
    assert keys.dbsize() == 0


def test_every_script_is_a_file_shipped_with_the_package() -> None:
    root = Path(__file__).resolve().parents[2]
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = pyproject["tool"]["setuptools"]["package-data"]["stage3_asyncio"]
    shipped = {path for pattern in patterns for path in (root / "stage3_asyncio").glob(pattern)}
    files = set((root / "stage3_asyncio" / "lua").glob("*.lua"))
    assert files == shipped
    assert {path.stem for path in files} == set(frontier_module.SCRIPTS)
