"""Exercise: at most ``per_host`` fetches at once to one host.

This is the Fetcher step, fetching a list of URLs.  It starts every
Fetcher at once: a thousand links to one server, a thousand connections
to it.  Change ``fetch_all`` so that no more than ``per_host`` fetches to
one host (its name and port: ``urlsplit(url).netloc``) are in flight at
once.  The others wait in a line of their host's, and each Fetcher that
finishes starts the next one waiting for its host.  Different hosts do
not wait for each other.
"""

import selectors

from shared.steps import status_line
from stage1_callbacks.steps import fetcher
from stage1_callbacks.steps.callback import loop


class Fetcher(fetcher.Fetcher):
    """A Fetcher that keeps its status line in ``results``."""

    def __init__(
        self,
        url: str,
        selector: selectors.BaseSelector,
        todo: set[str],
        results: dict[str, str],
    ) -> None:
        super().__init__(url, selector, todo)
        self.results = results

    def finish(self) -> None:
        """Keep the status line and mark this URL done."""
        self.results[self.url] = status_line(self.response)
        self.todo.remove(self.url)


def fetch_all(urls: list[str], per_host: int) -> dict[str, str]:
    """Fetch every URL; return ``{url: status line}``."""
    selector = selectors.DefaultSelector()
    todo = set(urls)
    results: dict[str, str] = {}
    for url in urls:
        Fetcher(url, selector, todo, results).fetch()
    loop(selector, todo)
    selector.close()
    return results
