"""Records a URL twice: stage 2 marking a URL seen when it is fetched, not when queued."""

import stage2_generators
from stage2_generators.crawler import Coroutine
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 2
HINT = (
    "test_many_roots: rule docs/contract.md#the-whole-crawl;"
    " read docs/coroutines.md#the-queue-crawler"
)


# --8<-- [start:bug]
class SeenWhenFetchedCrawler(stage2_generators.Crawler):
    def add_url(self, url: str, max_redirect: int | None = None) -> None:
        if max_redirect is None:
            max_redirect = self.max_redirect
        # The bug: queued, but not seen yet, so it may be queued again.
        self.q.put_nowait((url, max_redirect))

    def fetch(self, url: str, max_redirect: int) -> Coroutine:
        self.seen_urls.add(url)
        yield from super().fetch(url, max_redirect)


# --8<-- [end:bug]


class TestAcceptance(AcceptanceTests):
    stage = broken_stage(stage2_generators, SeenWhenFetchedCrawler)
    shape = "generators"
