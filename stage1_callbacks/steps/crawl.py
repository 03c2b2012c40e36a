"""Step 6: the Fetcher reads each page's links and crawls the whole site.

A Fetcher's ``finish`` now parses the response, and for each link not seen
before it marks the link seen, adds it to ``todo`` and starts a Fetcher for
it.  A redirect counts as a link to its target.  Links go through the
shared link parser (``links_to_follow``, with ``parse`` in
``shared/steps.py``), and only those on the root's site are followed.
The crawl ends when ``todo`` is empty: every URL seen is done.

Still wrong: no limit on the fetches in flight (a big site would run out of
sockets), no timeout, no retry, and an error in any callback (a refused
connection, say) ends the whole crawl with a traceback.  The finished
stage (``stage1_callbacks``) adds all of that.  And the code reads
backwards: one fetch is spread over three methods.  Stage 2 puts it back
into one function.
"""

import selectors
import time

from shared.steps import links_to_follow, parse, url_from_argv
from stage1_callbacks.steps import fetcher
from stage1_callbacks.steps.callback import loop


class Fetcher(fetcher.Fetcher):
    """A Fetcher that starts a Fetcher for each new link of its page."""

    def __init__(
        self,
        url: str,
        selector: selectors.BaseSelector,
        todo: set[str],
        seen_urls: set[str],
    ) -> None:
        super().__init__(url, selector, todo)
        self.seen_urls = seen_urls  # Every URL found; shared by all Fetchers.

    def finish(self) -> None:
        """Print the status, start fetching the new links, mark this done."""
        status, headers, body = parse(self.response)
        print(f"{status} {self.url}")
        links = links_to_follow(self.url, status, headers, body)
        for link in links - self.seen_urls:
            self.seen_urls.add(link)
            self.todo.add(link)
            Fetcher(link, self.selector, self.todo, self.seen_urls).fetch()
        self.todo.remove(self.url)


if __name__ == "__main__":
    start = time.perf_counter()
    root = url_from_argv()
    selector = selectors.DefaultSelector()
    todo, seen_urls = {root}, {root}
    Fetcher(root, selector, todo, seen_urls).fetch()
    loop(selector, todo)
    seconds = time.perf_counter() - start
    print(f"{len(seen_urls)} URLs in {seconds:.3f} s")
