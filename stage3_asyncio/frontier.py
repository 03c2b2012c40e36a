"""Beyond one machine: stage 3's crawler with its frontier in Valkey or Redis.

Stage 3's crawler keeps the whole state of a crawl in its own memory: the
queue of URLs to fetch, the set of URLs seen, what each host allows and
when it may be asked again, and the records.  A crash loses all of it, and
a second process cannot help.  ``FrontierCrawler`` keeps that state in a
Valkey or Redis server instead (``Frontier``), so any number of processes,
started at any time, work on one crawl, and a crawl outlives them all.

What changes is only *where* the state lives.  The few calls that touched
the queue and the seen set (``add_url``, taking a URL in ``work``, recording
an outcome) become calls to the server, each one step that the server runs
whole (a Lua script, in ``lua/`` beside this file), so two processes never
take the same URL or break a host's limit.  A URL taken is *leased*: if its
process dies, the lease runs out and the URL goes back to the queue, at
most ``max_attempts`` times.  One task per process, the courier, reports
the URLs its workers finished and leases the next ones in one round trip
(``Frontier.step``), while the workers fetch.  Each crawl has an identity
in the server, checked at every step: a process whose crawl is gone from
the server (flushed, forgotten, evicted) stops and says so.

The module reads as the chapter does: the queue (the server's step, then
the crawler's side of it), leases, politeness, and the finish.

Left out compared with scrapy-redis or Crawlee: priorities (the queue is
first in, first out), a Redis Cluster (all keys live on one server), and
fetching a host's robots.txt again after a day.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import importlib.resources
import itertools
import json
import os
import secrets
import socket
import time
from collections.abc import AsyncIterator, Iterable
from typing import Any

import redis.asyncio
import redis.asyncio.retry
import redis.backoff
import redis.exceptions

from shared.crawl.options import (
    DEFAULT_LEASE,
    DEFAULT_MAX_ATTEMPTS,
    check_frontier_url,
    finite,
    seconds,
    whole_number,
)
from shared.crawl.polite import MAX_ROBOTS_SIZE, Host, RobotsFetch, RobotsRules
from shared.record.report import stat_to_json
from shared.record.stats import CrawlLimitReached, FetchStatistic, Skipped, failure
from shared.web.http import Response
from shared.web.urls import PrivateAddress
from stage3_asyncio.crawler import LOGGER, NETWORK_ERRORS, Crawler

PREFIX = "crawl:"  # Every key of the crawl starts so; one crawl per database.
KEYS = (
    *("queue", "seen", "leases", "leased", "attempts", "records", "log"),
    *("pages", "robots", "meta", "processes"),
)
SCRIPTS = ("join", "step", "renew", "turn", "admit", "keep", "forget")  # lua/NAME.lua
SERVER_ERRORS = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)
MAX_POLL = 0.25  # The longest an idle worker waits before asking the server again.


class FrontierError(Exception):
    """The frontier's server cannot be reached, went away, or refused a step."""


class CrawlLost(FrontierError):
    """The crawl is no longer in the frontier's server, or not as this process left it."""


class GivenUp(Exception):
    """A URL whose lease ran out too many times: each process that took it died."""


@functools.cache
def lua(name: str) -> str:
    """Return the text of the script ``lua/NAME.lua``, read once."""
    return (importlib.resources.files(__package__) / "lua" / f"{name}.lua").read_text()


def entry_of(url: str, max_redirect: int, depth: int) -> str:
    """Return a queue entry: the redirect budget, the depth and the URL."""
    return f"{max_redirect} {depth} {url}"  # A normalized URL has no space.


def parse_taken(entry: bytes) -> tuple[str, int, int, int]:
    """Return the URL, redirect budget, depth and leases run out of an entry taken."""
    attempts, max_redirect, depth, url = entry.decode().split(" ", 3)
    return url, int(max_redirect), int(depth), int(attempts)


def shown(url: str) -> str:
    """Return ``url`` without its password, fit for a message."""
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.rpartition('@')[2]}"


# --- The queue: one step, run whole by the server ---------------------------------


# --8<-- [start:store]
class Frontier:
    """The state of one crawl, kept in a Valkey or Redis server at ``url``.

    Raises ValueError for a URL that names no such server, or a lease that
    is not a positive number of seconds.  Every call raises FrontierError
    when the server cannot be reached or refuses a script, and CrawlLost
    (a FrontierError) when the crawl this process joined is gone from it.
    """

    def __init__(self, url: str, lease: float = DEFAULT_LEASE) -> None:
        finite(seconds(zero_allowed=False))("lease", lease)
        self.url = check_frontier_url(url)
        self.lease = lease
        # A few quick tries ride out a dropped connection; the scripts are
        # safe to send again: a URL taken twice waits for its lease (which
        # counts as one attempt), and a record sent twice is kept once
        # (this process then leaves it out of its own report).
        retry = redis.asyncio.retry.Retry(redis.backoff.ExponentialBackoff(1.0, 0.1), 3)
        # Client: redis-py's own, but a cancelled task's command always stops it.
        self.redis = Client.from_url(url, retry=retry, socket_timeout=10)
        self.keys = {name: PREFIX + name for name in KEYS}
        # register_script: sent by its SHA1 digest (EVALSHA), its text only
        # the first time the server does not know it.
        self.scripts = {name: self.redis.register_script(lua(name)) for name in SCRIPTS}
        self.crawl_id = secrets.token_hex(8)  # This crawl's, if it is the first; see join.
        self.last_step = 0  # The number of this process's latest step in the server.

    async def call(self, name: str, keys: list[str], args: list[Any]) -> Any:
        """Run one of the scripts; raises FrontierError, or CrawlLost."""
        try:
            return await self.scripts[name](keys, args)
        except SERVER_ERRORS as error:
            raise self.gone(error) from None
        except redis.exceptions.ResponseError as error:  # The script's own error.
            raise self.refused(error) from None

    async def step(
        self, done: list[str], records: list[str], links: list[str], take: int
    ) -> tuple[list[bytes], float, list[bytes]]:
        """Record the URLs ``done``, queue their new links, then take up to ``take`` URLs.

        ``records`` are flat (url, record) pairs, ``links`` queue entries.  Returns the
        entries taken, how long until a lease runs out (-1 when none is
        held: with no entry, the crawl is finished), and the URLs whose
        record another process wrote first.
        """
        keys = self.key("meta", "queue", "seen", "leases", "leased", "records", "log", "attempts")
        args = [self.crawl_id, self.lease, take, len(done), *done, len(records) // 2, *records]
        entries, wait, _, refused, number = await self.call("step", keys, [*args, *links])
        if number <= self.last_step:  # The server's count of steps went back.
            raise self.lost(f"the frontier at {shown(self.url)} went back to an older copy")
        self.last_step = number
        return entries, float(wait), refused

    # --8<-- [end:store]

    def key(self, *names: str) -> list[str]:
        """Return the keys of the crawl with these names."""
        return [self.keys[name] for name in names]

    # --- Leases, and the crawl's identity ---

    async def join(self, t0: float, holder: str) -> None:
        """Join the crawl in the server, or start it (its identity is written once)."""
        keys = self.key("meta", "processes")
        found = await self.call("join", keys, [self.crawl_id, repr(t0), holder, self.lease])
        self.crawl_id = found.decode()

    async def renew(self, urls: Iterable[str], holder: str) -> None:
        """Extend the leases of ``urls`` (those still leased), and ``holder``'s own."""
        keys = self.key("meta", "leases", "processes")
        await self.call("renew", keys, [self.crawl_id, self.lease, holder, *urls])

    # --- Politeness ---

    async def turn(
        self, origin: str, holder: str, delay: float, limit: int, hold: float, held: float
    ) -> float:
        """Take a slot at ``origin`` if its limit and delay allow.

        Returns 0 when taken (``release`` it after the request), -1 when the
        host has no free slot, or the seconds its delay still asks to wait.
        ``hold``: the slot frees itself after that long, should its holder die.
        ``held``: seconds from now that a 429 or 503 asked for (0: none); every
        process then waits for them.
        """
        keys = [self.keys["meta"], PREFIX + "host:" + origin]
        args = [self.crawl_id, holder, delay, limit, hold, held]
        return float(await self.call("turn", keys, args))

    async def release(self, origin: str, holder: str) -> None:
        """Give back a slot taken with ``turn``."""
        await self.command("ZREM", PREFIX + "host:" + origin, holder)

    async def admit(self, max_pages: int) -> bool:
        """Count one more page fetched, unless ``max_pages`` have been already."""
        keys = self.key("meta", "pages")
        return bool(await self.call("admit", keys, [self.crawl_id, max_pages]))

    async def robots(self, origin: str) -> bytes | None:
        """Return what is stored about ``origin``'s robots.txt, or None."""
        stored: bytes | None = await self.command("HGET", self.keys["robots"], origin)
        return stored

    async def claim_robots(self, origin: str) -> bool:
        """Tell whether this caller is the one to fetch ``origin``'s robots.txt.

        The claim runs out after a lease, so a claimer that dies is replaced.
        """
        key = PREFIX + "robots-claim:" + origin
        return bool(await self.command("SET", key, "1", "NX", "PX", int(self.lease * 1000)))

    async def store_robots(self, origin: str, stored: bytes) -> None:
        """Keep what was learnt of ``origin``'s robots.txt for every process."""
        await self.call("keep", self.key("meta", "robots"), [self.crawl_id, origin, stored])

    # --- The finish, and what a finished crawl leaves ---

    async def leave(self, t1: float, holder: str) -> None:
        """Note when the crawl last ended, and that ``holder`` stopped working on it."""
        await self.call("keep", self.key("meta", "meta"), [self.crawl_id, "t1", repr(t1)])
        await self.command("ZREM", self.keys["processes"], holder)

    async def counts(self) -> dict[str, int]:
        """Return how many URLs are seen, queued, leased and recorded."""
        names = {"seen": "SCARD", "queue": "LLEN", "leases": "ZCARD", "log": "LLEN"}
        return {name: await self.command(cmd, self.keys[name]) for name, cmd in names.items()}

    async def records(self, chunk: int = 1000) -> list[str]:
        """Return every record, as JSON text, in the order they were written."""
        urls = await self.command("LRANGE", self.keys["log"], 0, -1)
        lines = []
        for start in range(0, len(urls), chunk):
            found = await self.command("HMGET", self.keys["records"], *urls[start : start + chunk])
            lines += [line.decode() for line in found]
        return lines

    async def times(self) -> tuple[float, float | None]:
        """Return when the crawl started and when it last ended (None: never)."""
        t0, t1 = await self.command("HMGET", self.keys["meta"], "t0", "t1")
        return float(t0 or time.time()), float(t1) if t1 else None

    async def forget(self) -> tuple[int, int, int, int]:
        """Remove every key of a finished crawl, in one step.

        Returns how many URLs are queued, leased and processes at work, and
        how many keys were removed: none unless the first three are 0.
        """
        queued, leased, working, removed = await self.call(
            "forget", self.key("queue", "leases", "processes"), [PREFIX]
        )
        return queued, leased, working, removed

    # --- Talking to the server ---

    async def connect(self) -> None:
        """Check that the server answers; raises FrontierError saying why not."""
        try:
            await self.redis.ping()
        except (*SERVER_ERRORS, redis.exceptions.RedisError) as error:
            await self.close()
            raise FrontierError(
                f"cannot reach the frontier at {shown(self.url)}: {error}"
            ) from None

    async def settings_problems(self) -> list[str]:
        """Return what in the server's settings could lose the crawl (none: [])."""
        try:
            appendonly = await self.redis.config_get("appendonly")
            policy = await self.redis.config_get("maxmemory-policy")
        except SERVER_ERRORS as error:
            raise self.gone(error) from None
        except redis.exceptions.ResponseError as error:  # Refused: a managed server.
            return [
                f"cannot read the settings of the frontier at {shown(self.url)} ({error}): "
                "make sure it keeps an append-only file (appendonly yes) and evicts "
                "nothing (maxmemory-policy noeviction), or it may lose the crawl"
            ]
        problems = []
        if appendonly.get("appendonly", "yes") != "yes":
            problems.append(
                f"the frontier at {shown(self.url)} keeps no append-only file "
                "(appendonly no): a restart of the server loses the crawl"
            )
        if policy.get("maxmemory-policy", "noeviction") != "noeviction":
            problems.append(
                f"the frontier at {shown(self.url)} evicts keys when its memory is full "
                f"(maxmemory-policy {policy['maxmemory-policy']}): the crawl would lose "
                "URLs; set it to noeviction"
            )
        return problems

    async def command(self, name: str, *args: Any) -> Any:
        """Send one plain command; raises FrontierError if the server is gone."""
        try:
            return await self.redis.execute_command(name, *args)  # type: ignore[no-untyped-call]
        except SERVER_ERRORS as error:
            raise self.gone(error) from None
        except redis.exceptions.ResponseError as error:
            raise self.refused(error) from None

    def gone(self, error: BaseException) -> FrontierError:
        """Return the error that says the server went away, and why."""
        return FrontierError(
            f"the frontier at {shown(self.url)} went away: {error}; what was recorded "
            "there is kept if the server keeps it on disk (appendonly yes)"
        )

    def refused(self, error: redis.exceptions.ResponseError) -> FrontierError:
        """Return the error for a script's or command's error: CrawlLost, or one line."""
        if str(error).startswith("LOST"):  # See the scripts: the identity did not match.
            where = shown(self.url)
            return self.lost(f"the crawl is no longer in the frontier at {where} (flushed, "
                             "forgotten or evicted)")  # fmt: skip
        message = " ".join(str(error).split())  # One line, whatever the server said.
        return FrontierError(
            f"the frontier at {shown(self.url)} refused a step: {message}; "
            "what was recorded there is kept"
        )

    def lost(self, what: str) -> CrawlLost:
        """Return the error that says ``what`` happened to the crawl in the server."""
        return CrawlLost(f"{what}: this process stops (its own records are in its report)")

    async def close(self) -> None:
        """Close the connections to the server."""
        await self.redis.aclose()


# --- The queue, from the crawler's side -------------------------------------------


# --8<-- [start:crawler]
class FrontierCrawler(Crawler):
    """Stage 3's crawler, its queue and seen set replaced by a ``Frontier``.

    ``frontier`` is the server's URL (redis://, rediss:// or unix://),
    ``lease`` the seconds a taken URL stays leased to this process without
    news from it, ``max_attempts`` how many leases of one URL may run out
    before it is recorded as failed.  Raises ValueError for a bad URL,
    lease or number of attempts, as for any option, and for ``sitemaps``,
    which this version does not share.
    """

    def __init__(
        self,
        roots: str | Iterable[str],
        *,
        frontier: str,
        lease: float = DEFAULT_LEASE,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        **options: Any,
    ) -> None:
        super().__init__(roots, **options)
        if self.sitemaps:  # Which URLs are sitemaps is known to one process only.
            raise ValueError("sitemaps are not read with a shared frontier")
        whole_number(1)("max_attempts", max_attempts)
        self.frontier = Frontier(frontier, lease)
        self.max_attempts = max_attempts
        # What this process has decided since it last told the server: the
        # records, and the links as queue entries (the server reads each
        # URL out of its entry: one value per link to send, not two).  Filled only
        # between two awaits, and sent before the next one, so no two
        # workers' outcomes ever mix here.
        self.records_out: list[FetchStatistic] = []
        self.links_out: list[str] = []
        self.done_out: list[str] = []  # URLs fetched since the server was last told.
        self.leased: set[str] = set()  # URLs this process holds, renewed while it lives.
        self.sent: set[str] = set()  # URLs this process has sent the server.
        # The URLs leased here that no worker has started yet, and how many
        # workers wait for one.  One task, the courier, talks to the server
        # for them all; it keeps a few URLs ready beyond those waiting, so
        # that a worker which finishes a page starts the next at once.
        self.ready: asyncio.Queue[tuple[str, int, int, int] | None] = asyncio.Queue()
        self.waiting = 0
        self.spare = max(1, self.max_tasks // 4)
        self.wake = asyncio.Event()  # Set when the courier has news to carry.
        # Who this process is, to the server: the holder of its host slots.
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self.turns = itertools.count()

    # --8<-- [end:crawler]

    # --8<-- [start:add_url]
    def add_url(self, url: str, max_redirect: int | None = None) -> None:
        """Send ``url`` to the server, which queues it unless it has seen it.

        ``seen_urls`` holds only the URLs this process took, so that its own
        report and records agree: the seen set of the crawl is the server's.
        """
        if url in self.sent:  # The server has it already: spare the bytes.
            return
        if max_redirect is None:
            max_redirect = self.max_redirect
        self.sent.add(url)
        self.links_out.append(entry_of(url, max_redirect, self.depths.get(url, 0)))

    def record_statistic(self, fetch_statistic: FetchStatistic) -> None:
        """Record the outcome of one URL here and, at the next step, in the server."""
        super().record_statistic(fetch_statistic)
        self.records_out.append(fetch_statistic)

    def outbox(self) -> tuple[list[str], list[str]]:
        """Return the records (as JSON) and links not yet sent, and start afresh."""
        records = []
        for stat in self.records_out:  # The page's links are known by now.
            record = stat_to_json(stat, self.page_links.get(stat.url, ()))
            records += [stat.url, json.dumps(record)]  # ASCII: any text fits.
        links = self.links_out
        self.records_out, self.links_out = [], []
        return records, links

    # --8<-- [end:add_url]

    # --8<-- [start:work]
    async def work(self) -> None:
        """Take URLs the courier leased and fetch them, until the crawl is finished."""
        while (entry := await self.next_url()) is not None:
            url, max_redirect, depth, attempts = entry
            if self.max_depth is not None:
                self.depths[url] = depth
            try:
                if attempts >= self.max_attempts:  # Every process that took it died.
                    self.give_up(url, attempts)
                else:
                    await self.fetch(url, max_redirect)
            except FrontierError:
                raise
            except Exception as error:  # A bug, not a network error: keep going.
                self.record_crash(url, error)
            self.done_out.append(url)  # Its records and links are in the outbox.
            self.wake.set()

    async def next_url(self) -> tuple[str, int, int, int] | None:
        """Return the next URL leased to this process; None when the crawl is over."""
        self.waiting += 1
        self.wake.set()  # The courier may keep one more ready.
        try:
            return await self.ready.get()
        finally:
            self.waiting -= 1

    # --8<-- [end:work]

    # --8<-- [start:courier]
    async def courier(self) -> None:
        """Carry outcomes to the server and bring back leased URLs, one trip at a time.

        Whatever the workers finished during a trip goes in the next, so
        the busier the process, the more pages share one round trip.  While
        the queue is empty but URLs are leased, their pages may yet bring
        new links: ask again, less often as time goes on.
        """
        poll = 0.01
        while True:
            self.wake.clear()
            take = max(0, self.waiting + self.spare - self.ready.qsize())
            entries, wait = await self.trip(take)
            for entry in entries:
                self.ready.put_nowait(self.leased_here(entry))
            if not entries and wait < 0:  # Nothing queued or leased: the crawl is over.
                return  # Each worker then takes a None: see end_work.
            poll = 0.01 if entries else min(poll * 2, MAX_POLL)
            if len(entries) < take:  # The queue ran dry: wait, unless a page ends.
                await self.nap(min(poll, wait))
            else:
                await self.wake.wait()

    # --8<-- [end:courier]

    def end_work(self, courier: asyncio.Task[None]) -> None:
        """Tell every worker that no URL will come: the courier has stopped.

        It stops when the crawl is over, or on an error (then the URLs it
        leased and no worker started are dropped; their leases run out).
        However it stopped, no worker is left waiting for a URL.
        """
        while not self.ready.empty():  # Empty at the end of a crawl.
            self.ready.get_nowait()
        for _ in range(self.max_tasks):
            self.ready.put_nowait(None)

    async def trip(self, take: int) -> tuple[list[bytes], float]:
        """Send what the workers finished and lease up to ``take`` URLs: one step."""
        done, self.done_out = self.done_out, []
        entries, wait, refused = await self.frontier.step(done, *self.outbox(), take=take)
        self.leased.difference_update(done)
        if refused:  # Another process recorded them first: they are its pages.
            urls = {url.decode() for url in refused}
            self.done[:] = [stat for stat in self.done if stat.url not in urls]
        return entries, wait

    def leased_here(self, entry: bytes) -> tuple[str, int, int, int]:
        """Note the URL of ``entry`` as leased to this process; return its parts."""
        url, max_redirect, depth, attempts = parse_taken(entry)
        self.leased.add(url)
        self.seen_urls.add(url)
        return url, max_redirect, depth, attempts

    async def nap(self, seconds: float) -> None:
        """Wait ``seconds``, or less if a worker finishes a page (it may bring links)."""
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for could lose
        # a cancel that came as the wait ended (see Client, at the end).
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self.wake.wait()

    def give_up(self, url: str, attempts: int) -> None:
        """Record ``url`` as failed without fetching it: its leases ran out too often."""
        reason = (
            f"given up after {attempts} leases ran out: each process that took it "
            "stopped before recording it (a crash, a kill, or a hang)"
        )
        LOGGER.error("%s: %s", url, reason)
        self.record_statistic(failure(url, GivenUp(reason)))

    # --- Leases ---------------------------------------------------------------------

    # --8<-- [start:crawl]
    async def crawl(self) -> None:
        """Work on the crawl in the server until no URL is queued or leased.

        Stage 3's ``crawl`` opens the session and the task group; this one
        adds the server around it.  Raises FrontierError when the server
        cannot be reached, goes away or refuses a step, and CrawlLost when
        the crawl is gone from it.
        """
        await self.frontier.connect()
        for problem in await self.frontier.settings_problems():
            LOGGER.warning("%s", problem)
        try:
            await super().crawl()
        except ExceptionGroup as group:  # A worker's error, out of the task group.
            raise first(group, FrontierError) or group from None
        finally:
            self.t1 = self.t1 or time.time()
            await self.frontier.close()

    async def crawl_in(self, group: asyncio.TaskGroup) -> None:
        """Start the courier, the lease keeper and the workers in ``group``; wait for the end."""
        self.t0 = time.time()
        await self.frontier.join(self.t0, self.holder)  # The crawl's identity, once.
        self.add_roots()  # The server queues those it has not seen.
        helpers = [group.create_task(self.keep_leases(), name="leases")]
        helpers.append(group.create_task(self.courier(), name="courier"))
        helpers[-1].add_done_callback(self.end_work)  # However the courier stops.
        names = [f"worker {n}" for n in range(1, self.max_tasks + 1)]  # Named in a trace.
        workers = [group.create_task(self.work(), name=name) for name in names]
        await asyncio.wait(workers)  # Each ends when the courier finds the crawl finished.
        for helper in helpers:
            helper.cancel()
        # A worker that outlived its lease may have finished since: tell the server.
        await self.trip(take=0)
        self.t1 = time.time()
        await self.frontier.leave(self.t1, self.holder)

    async def keep_leases(self) -> None:
        """Renew this process's leases three times a lease, for as long as it lives."""
        while True:
            await asyncio.sleep(self.frontier.lease / 3)
            try:
                await self.frontier.renew(list(self.leased), self.holder)
            except FrontierError as error:  # The courier meets it too, and stops.
                LOGGER.warning("%s", error)

    # --8<-- [end:crawl]

    # --- Politeness -----------------------------------------------------------------

    async def admit_everywhere(self) -> Skipped | None:
        """Count one more page in the server, or return why not (max_pages)."""
        if self.max_pages is None or await self.frontier.admit(self.max_pages):
            return None
        return CrawlLimitReached(f"max_pages={self.max_pages} reached")

    # --8<-- [start:polite]
    async def polite_request(self, url: str, max_size: int) -> Response:
        """GET ``url`` once, when its host has a free slot and its delay has passed."""
        # This process's share of the host first (fewer questions to the
        # server), then a slot of the host's limit across every process.
        async with self.host_slot(url):
            host, now = self.polite.host(url), asyncio.get_running_loop().time()
            delay, limit = self.polite.delay_of(host), self.max_per_host or 0
            held = max(0.0, host.not_before - now)  # A 429 or 503 asked for it.
            if delay == 0 and limit == 0 and held == 0:  # Nothing to share: no round trip.
                self.started(url)
                return await self.request(url, max_size)
            async with self.shared_turn(url, host.origin, delay, limit, held):
                return await self.request(url, max_size)

    @contextlib.asynccontextmanager
    async def shared_turn(
        self, url: str, origin: str, delay: float, limit: int, held: float
    ) -> AsyncIterator[None]:
        """Hold one of ``origin``'s slots, kept in the server, once its delay has passed.

        ``held``: seconds from now that a 429 or 503 asked the host to be left alone.
        """
        holder, poll = f"{self.holder}:{next(self.turns)}", 0.005
        hold = self.timeout + 1  # A request ends by then; a dead holder's slot frees.
        asking = (origin, holder, delay, limit, hold)
        while (wait := await self.frontier.turn(*asking, held)) != 0:
            held = 0.0  # The server has it now.
            if wait < 0:  # No free slot: one frees when some request ends.
                wait, poll = poll, min(poll * 2, MAX_POLL)
            await asyncio.sleep(wait)
        self.started(url)
        try:
            yield
        finally:
            await self.frontier.release(origin, holder)

    def started(self, url: str) -> None:
        """Tell ``on_request`` (the tests) that a request to ``url`` starts now."""
        if self.on_request is not None:
            self.on_request(url, asyncio.get_running_loop().time())

    # --8<-- [end:polite]

    async def fetch_robots(self, host: Host) -> RobotsRules:
        """Return a host's robots.txt rules: from the server, or fetched once for all."""
        poll = 0.01
        while True:
            stored = await self.frontier.robots(host.origin)
            if stored is not None:
                return rules_from(stored, self.user_agent)
            if await self.frontier.claim_robots(host.origin):
                rules, stored = await self.fetch_robots_here(host)
                await self.frontier.store_robots(host.origin, stored)
                return rules
            await asyncio.sleep(poll)  # Another process is fetching it.
            poll = min(poll * 2, MAX_POLL)

    async def fetch_robots_here(self, host: Host) -> tuple[RobotsRules, bytes]:
        """Fetch a host's robots.txt; return its rules and what to store of them."""
        robots, body = RobotsFetch(host.origin, self.user_agent), b""
        while robots.rules is None:
            try:
                # A 429 or 503 robots.txt is not waited for: it disallows everything.
                response = await self.fetch_response(robots.url, MAX_ROBOTS_SIZE, come_back=False)
            except (*NETWORK_ERRORS, PrivateAddress) as error:
                robots.failed(error)
            else:
                body = response.body
                robots.received(response)
        return robots.rules, stored_rules(robots.rules, body)


def stored_rules(rules: RobotsRules, body: bytes) -> bytes:
    """Return what a server keeps of robots.txt rules: how they were made."""
    if rules.parser is not None:
        return b"parse\n" + body
    return b"allow\n" if rules.everything else b"deny\n" + rules.refusal.encode()


def rules_from(stored: bytes, user_agent: str) -> RobotsRules:
    """Return the robots.txt rules that ``stored_rules`` kept."""
    how, _, rest = stored.partition(b"\n")
    if how == b"parse":
        return RobotsRules.parse(rest, user_agent)
    if how == b"allow":
        return RobotsRules.allow_all(user_agent)
    return RobotsRules.disallow_all(rest.decode(), user_agent)


def first(group: BaseExceptionGroup[Any], kind: type[Exception]) -> Exception | None:
    """Return the first exception of ``kind`` in ``group`` (nested groups too), or None."""
    for error in group.exceptions:
        found = first(error, kind) if isinstance(error, BaseExceptionGroup) else error
        if isinstance(found, kind):
            return found
    return None


# --- Python 3.11: a cancel that redis-py's timeouts would lose ---------------------


class Client(redis.asyncio.Redis):
    """redis-py's asyncio client; a command whose task was cancelled meanwhile raises.

    redis-py bounds each read and write on its socket with
    ``asyncio.wait_for``.  On Python 3.11, wait_for returns normally when the
    cancel comes just as what it waits for is done (3.12's wait_for keeps
    the cancel): the task was asked to stop, and goes on.  A crawl that stops
    on an error (a store rolled back, say) has its task group cancel each
    worker once.  A worker that went on would fetch its page and then wait
    for a URL from the courier, which had stopped: the process hung.  The
    task still counts the request (``Task.cancelling``), so it is raised here.
    """

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        """Run one command; raises CancelledError if its task was cancelled meanwhile."""
        result = await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise asyncio.CancelledError  # The cancel that wait_for returned past.
        return result


# --- The finish: the whole crawl, read back from the server -------------------------


@dataclasses.dataclass
class StoredCrawl:
    """A crawl read back from its frontier: what ``shared.record.report`` prints."""

    done: list[FetchStatistic]
    seen_urls: set[str]
    max_tasks: int
    t0: float
    t1: float | None
    page_links: dict[str, tuple[str, ...]]  # Each page's links, for the --json file.


async def load_crawl(frontier: Frontier, max_tasks: int) -> StoredCrawl:
    """Read every record of the crawl in ``frontier``; raises FrontierError."""
    lines = await frontier.records()
    seen = {url.decode() for url in await frontier.command("SMEMBERS", frontier.keys["seen"])}
    t0, t1 = await frontier.times()
    kinds: dict[tuple[str, bool], type[Exception]] = {}
    done = [stat_from_json(line, kinds) for line in lines]
    links = {
        stat.url: tuple(json.loads(line)["links"]) for stat, line in zip(done, lines, strict=True)
    }
    return StoredCrawl(done, seen | {stat.url for stat in done}, max_tasks, t0, t1, links)


def stat_from_json(line: str, kinds: dict[tuple[str, bool], type[Exception]]) -> FetchStatistic:
    """Return the statistic that ``shared.record.report.stat_to_json`` wrote as ``line``.

    The exception comes back as an exception of the same class name (made
    once per name in ``kinds``) and message: all that the report shows.
    """
    record = json.loads(line)
    error: Exception | None = None
    if record["exception"] is not None:
        name, _, message = record["exception"].partition(": ")
        if (name, record["skipped"]) not in kinds:
            base = Skipped if record["skipped"] else Exception
            kinds[name, record["skipped"]] = type(name, (base,), {})
        error = kinds[name, record["skipped"]](message)
    fields = {name: record[name] for name in FetchStatistic._fields}
    return FetchStatistic(**{**fields, "exception": error})
