"""A crawler with a race: robots.txt checked before an await, and noted after it.

    python docs/examples/racy_robots.py [--seeds N | --seed K] [--fixed]

``RacyCrawler`` is stage 3 with the tempting way to learn a host's
robots.txt: if the rules are not known yet, fetch them and note them.  Two
workers that need the same host while its robots.txt is on its way both
see "not known yet", and both fetch it.  Whether that happens depends on
which answers come back first, so the ordinary run does not show it.

Each run crawls the roots of two small test sites (the first site's home
page, the second site's, then a second page of the first site) in a
simulated world (shared/sim) with two workers, every answer taking 100 to
300 ms.  With
``--seeds N`` (100 by default) it runs seeds 0 to N-1 and lists those
under which the first site was asked for its robots.txt twice; with
``--seed K`` it runs seed K alone and prints each request of both
sites as their servers heard it, in virtual time, the same on every run.
``--fixed`` runs stage 3's own ``robots_of`` instead, where every worker
waits for one shared task.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any, NoReturn

import stage3_asyncio
from shared.record.trace import Trace, lane_name
from shared.sim import Conditions, World
from shared.testsite.site import Site

WEATHER = Conditions(latency=0.2, jitter=0.5)  # Answers take 100 to 300 ms.


# --8<-- [start:racy]
class RacyCrawler(stage3_asyncio.Crawler):
    """Stage 3, but a worker fetches robots.txt itself if it is not known."""

    async def robots_of(self, url: str) -> None:
        host = self.polite.host(url)
        if host.rules is None:  # The check, before the await...
            host.rules = await self.fetch_robots(host)  # ...the update, after.


# --8<-- [end:racy]


class LaneTrace(Trace):
    """A trace with a row per request of each URL, each fetch known by its worker.

    The crawl's own trace has a row per worker and knows a fetch by its URL
    alone: a crawl fetches each URL once.  The race breaks that, so the
    figure of it has a row per URL, named by its site and path (``1
    robots`` is the first site's robots.txt), and a row of its own for a
    second request of a URL (``1 robots #2``).
    """

    def __init__(self, name: str, queued: Any, sites: dict[str, str]) -> None:
        super().__init__(name, queued)
        self.sites = sites  # The number of each site's row labels, by root URL.
        self.workers: dict[int, str | None] = {}  # Which worker made each fetch.

    def begin(self, url: str, lane: object = None) -> None:
        root = next(root for root in self.sites if url.startswith(root))
        path = url.removeprefix(root).replace("robots.txt", "robots") or "/"
        row = f"{self.sites[root]} {path}"
        if any(fetch.url == url for fetch in self.fetches):
            row += " #2"  # Asked for again: the race.
        super().begin(url, row)
        self.workers[id(self.fetches[-1])] = lane_name(asyncio.current_task())

    def pick(self, url: str) -> None:
        """Make the current task's latest fetch of ``url`` the one to note."""
        worker = lane_name(asyncio.current_task())
        for fetch in reversed(self.fetches):
            if fetch.url == url and self.workers.get(id(fetch)) == worker:
                self.latest[url] = fetch
                return

    def phase(self, url: str, name: str) -> None:
        self.pick(url)
        super().phase(url, name)

    def end(self, url: str) -> None:
        self.pick(url)
        super().end(url)


def crawl(seed: int, fixed: bool = False, trace: str | None = None) -> tuple[World, Site]:
    """Crawl the two sites under ``seed``; return the world and the first site.

    What the servers heard is in ``world.network.heard``.  ``trace`` names
    a file for the crawl's trace.
    """
    world = World(seed, WEATHER)
    first, second = Site(10), Site(10)
    first_root = world.serve(first, port=8000)
    second_root = world.serve(second, port=8001)
    roots = [first_root, second_root, first_root + "pages/1/"]
    kind = stage3_asyncio.Crawler if fixed else RacyCrawler
    crawler = kind(roots, max_tasks=2, max_depth=0, obey_robots=True, trace=trace)
    if trace:
        sites = {first_root: "1", second_root: "2"}
        crawler.recorder = LaneTrace(crawler.recorder.name, crawler.queued, sites)
    crawler.simulate(world)
    stage3_asyncio.run(crawler)
    return world, first


def asked_twice(seed: int, fixed: bool = False) -> bool:
    """Tell whether the first site was asked for its robots.txt more than once."""
    _, site = crawl(seed, fixed)
    return site.counters.requests["/robots.txt"] > 1


USAGE = "usage: python docs/examples/racy_robots.py [--seeds N | --seed K] [--fixed]"


class Parser(argparse.ArgumentParser):
    """An argument parser whose error ends with the one usage line."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n{USAGE}\n")


def main(argv: list[str] | None = None) -> None:
    """Run the seeds asked for and print what they did."""
    parser = Parser(prog="python docs/examples/racy_robots.py", usage=USAGE[7:])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--seeds", type=int, default=100, metavar="N")
    which.add_argument("--seed", type=int, metavar="K")
    parser.add_argument("--fixed", action="store_true", help="stage 3's own robots_of")
    args: Any = parser.parse_args(argv)
    if args.seeds < 1 or (args.seed is not None and args.seed < 0):
        parser.error("a seed is at least 0, and --seeds N at least 1")
    if args.seed is not None:
        world, site = crawl(args.seed, args.fixed)
        for heard in world.network.heard:  # Port 8000 is the first site, 8001 the second.
            answered = f"{heard.answered:.3f} s" if heard.answered is not None else "never"
            print(f"{heard.time:7.3f} s  {heard.server} {heard.target}  (answered {answered})")
        times = site.counters.requests["/robots.txt"]
        print(f"seed {args.seed}: the first site's robots.txt asked for {times} time(s)")
        return
    failing = [seed for seed in range(args.seeds) if asked_twice(seed, args.fixed)]
    print(f"robots.txt asked for twice under {len(failing)} of {args.seeds} seeds: {failing}")


if __name__ == "__main__":
    main()
