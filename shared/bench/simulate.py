"""The ideal crawler: a discrete-event simulation on the site's link graph.

A real crawler's wall time at latency L is L per fetch, spread over
``max_tasks`` slots, plus whatever its own CPU and the server's add.  The
simulation keeps the waiting and, when asked, the crawler's CPU: every
fetch waits exactly ``latency`` seconds, then its page costs ``cpu``
seconds on the crawler's one core, one page at a time (a page that
arrives while the core is busy waits its turn, still holding its slot).
With a ``server_cpu``, the server has a core of its own, and once a
fetch's latency has passed, its answer costs that core ``server_cpu``
seconds, one answer at a time: with hundreds of slots, the server can be
what bounds the crawl.
The crawler is work-conserving: a slot never idles while a URL is queued.
URLs are taken first in, first out, and the links of a page are queued in
sorted order, as ``sitegraph`` lists them.  Its makespan is the ideal a
real crawler is measured against; with the crawler's measured CPU per page,
what is left between the two is time lost waiting.
"""

from __future__ import annotations

import dataclasses
import heapq
import random
from collections import deque

from shared.bench.sitegraph import Node

WAITED, ANSWERED, PARSED = 0, 1, 2  # The steps of a simulated fetch.


@dataclasses.dataclass(frozen=True)
class Simulation:
    """The outcome of a simulated crawl."""

    makespan: float  # Seconds from the first fetch to the last completion.
    fetched: list[str]  # URLs in the order their fetches started.
    max_in_flight: int


def simulate(
    graph: dict[str, Node],
    root: str,
    slots: int,
    latency: float,
    seed: int | None = None,
    cpu: float = 0.0,
    server_cpu: float = 0.0,
) -> Simulation:
    """Crawl ``graph`` from ``root`` with ``slots`` fetches at once, each ``latency`` long.

    Each page then costs ``cpu`` seconds on one core, pages in turn, and,
    before it arrives, ``server_cpu`` seconds on the server's core.  With a
    ``seed``, each page's new links are queued in a shuffled order instead
    of sorted, to show how much the order matters.  Raises ValueError when
    ``slots`` is below 1 or ``cpu`` or ``server_cpu`` is negative.
    """
    if slots < 1:
        raise ValueError(f"slots must be at least 1, not {slots}")
    if cpu < 0 or server_cpu < 0:
        raise ValueError(f"cpu must be at least 0 seconds, not {min(cpu, server_cpu)}")
    shuffle = random.Random(seed).shuffle if seed is not None else None
    queue, seen = deque([root]), {root}
    # Heap of (time, order, url, step): a fetch's latency ends (WAITED), the
    # server's answer is ready (ANSWERED), then the crawler's CPU work ends
    # (PARSED) and its slot is free.  With no server CPU, no WAITED step.
    events: list[tuple[float, int, str, int]] = []
    fetched: list[str] = []
    first = WAITED if server_cpu else ANSWERED
    now, core_free, server_free, in_flight, max_in_flight, order = 0.0, 0.0, 0.0, 0, 0, 0
    while queue or events:
        while queue and in_flight < slots:
            url = queue.popleft()
            heapq.heappush(events, (now + latency, order := order + 1, url, first))
            fetched.append(url)
            in_flight += 1
        max_in_flight = max(max_in_flight, in_flight)
        now = events[0][0]
        while events and events[0][0] <= now:  # Everything that happens now.
            _, _, url, step = heapq.heappop(events)
            if step == WAITED:  # The server builds the answer, one at a time.
                server_free = max(now, server_free) + server_cpu
                heapq.heappush(events, (server_free, order := order + 1, url, ANSWERED))
                continue
            if step == ANSWERED:  # The page arrived: it waits for the crawler's core.
                core_free = max(now, core_free) + cpu
                heapq.heappush(events, (core_free, order := order + 1, url, PARSED))
                continue
            in_flight -= 1
            links = [link for link in graph[url].links if link not in seen]
            if shuffle is not None:
                shuffle(links)
            seen.update(links)
            queue.extend(links)
    return Simulation(now, fetched, max_in_flight)


def depth(graph: dict[str, Node], root: str) -> int:
    """Return the number of fetches on the longest shortest path from ``root``.

    ``depth * latency`` is a lower bound for any crawler's wall time.
    """
    levels, frontier, seen = 0, [root], {root}
    while frontier:
        levels += 1
        nxt = []
        for url in frontier:
            for link in graph[url].links:
                if link not in seen:
                    seen.add(link)
                    nxt.append(link)
        frontier = nxt
    return levels
