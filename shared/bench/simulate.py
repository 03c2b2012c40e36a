"""The ideal crawler: a discrete-event simulation on the site's link graph.

A real crawler's wall time at latency L is L per fetch, spread over
``max_tasks`` slots, plus whatever its own CPU and the server's add.  The
simulation keeps only the first part: every fetch takes exactly
``latency`` seconds, and the crawler is work-conserving (a slot never idles
while a URL is queued).  URLs are taken first in, first out, and the links
of a page are queued in sorted order, as ``sitegraph`` lists them.  Its
makespan is the ideal a real crawler is measured against.
"""

from __future__ import annotations

import dataclasses
import heapq
import random
from collections import deque

from shared.bench.sitegraph import Node


@dataclasses.dataclass(frozen=True)
class Simulation:
    """The outcome of a simulated crawl."""

    makespan: float  # Seconds from the first fetch to the last completion.
    fetched: list[str]  # URLs in the order their fetches started.
    max_in_flight: int


def simulate(
    graph: dict[str, Node], root: str, slots: int, latency: float, seed: int | None = None
) -> Simulation:
    """Crawl ``graph`` from ``root`` with ``slots`` fetches at once, each ``latency`` long.

    With a ``seed``, each page's new links are queued in a shuffled order
    instead of sorted, to show how much the order matters.  Raises
    ValueError when ``slots`` is below 1.
    """
    if slots < 1:
        raise ValueError(f"slots must be at least 1, not {slots}")
    shuffle = random.Random(seed).shuffle if seed is not None else None
    queue, seen = deque([root]), {root}
    running: list[tuple[float, int, str]] = []  # Heap of (end time, order, url).
    fetched: list[str] = []
    now, max_in_flight = 0.0, 0
    while queue or running:
        while queue and len(running) < slots:
            url = queue.popleft()
            heapq.heappush(running, (now + latency, len(fetched), url))
            fetched.append(url)
        max_in_flight = max(max_in_flight, len(running))
        now = running[0][0]
        while running and running[0][0] <= now:  # Every fetch that ends now.
            links = [link for link in graph[heapq.heappop(running)[2]].links if link not in seen]
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
