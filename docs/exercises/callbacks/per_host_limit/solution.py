"""A solution: a count and a waiting line per host.

``start`` fetches a URL now if its host has room, or puts it in the
host's line.  A Fetcher calls ``finished`` at its end, which starts the
next URL in its host's line: a callback program cannot wait for a free
slot, so the end of one fetch is what starts the next.
"""

import collections
import selectors
import urllib.parse
from collections.abc import Callable

from shared.steps import status_line
from stage1_callbacks.steps import fetcher
from stage1_callbacks.steps.callback import loop


class Fetcher(fetcher.Fetcher):
    """A Fetcher that keeps its status line and says when it is done."""

    def __init__(
        self,
        url: str,
        selector: selectors.BaseSelector,
        todo: set[str],
        results: dict[str, str],
        finished: Callable[[str], None],
    ) -> None:
        super().__init__(url, selector, todo)
        self.results = results
        self.finished = finished

    def finish(self) -> None:
        """Keep the status line, mark this URL done, and say so."""
        self.results[self.url] = status_line(self.response)
        self.todo.remove(self.url)
        self.finished(self.url)


def fetch_all(urls: list[str], per_host: int) -> dict[str, str]:
    """Fetch every URL, ``per_host`` at a time per host."""
    selector = selectors.DefaultSelector()
    todo = set(urls)
    results: dict[str, str] = {}
    running: collections.Counter[str] = collections.Counter()
    waiting: dict[str, collections.deque[str]] = collections.defaultdict(
        collections.deque
    )

    def start(url: str) -> None:
        host = urllib.parse.urlsplit(url).netloc
        if running[host] < per_host:
            running[host] += 1
            Fetcher(url, selector, todo, results, finished).fetch()
        else:
            waiting[host].append(url)  # Started when one of its host's ends.

    def finished(url: str) -> None:
        host = urllib.parse.urlsplit(url).netloc
        running[host] -= 1
        if waiting[host]:
            start(waiting[host].popleft())

    for url in urls:
        start(url)
    loop(selector, todo)
    selector.close()
    return results
