"""Never times out: stage 2 sending each request without wait_for."""

import stage2_generators
from stage2_generators import loop as event_loop
from stage2_generators.crawler import Coroutine
from stage2_generators.tasks import sleep
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 4
HINTS = {
    "generators": (
        "test_a_stalled_server_ends_in_the_crawls_timeout [seed0]:"
        " rule docs/contract.md#fetching-one-url;"
        " read docs/real-coroutines.md#timeouts-wait_for"
    ),
}


class NeverTimesOutCrawler(stage2_generators.Crawler):
    def polite_request(self, url: str, max_size: int) -> Coroutine:
        loop = event_loop.get_running_loop()
        slot = self.host_slot(url)
        yield from slot.acquire()
        try:
            while (wait := self.turn(url, loop.time())) > 0:
                yield from sleep(wait)
            return (yield from self.request(url, max_size))  # The bug: no wait_for.
        finally:
            slot.release()


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, NeverTimesOutCrawler)
    shape = "generators"
