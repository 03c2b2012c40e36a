"""Leaks a socket: stage 2 closing its socket after a good answer only, not after an error."""

import stage2_generators
from shared.web.http import build_request, request_target
from stage2_generators import loop as event_loop
from stage2_generators.crawler import Coroutine
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 4
HINTS = {
    "generators": (
        "test_sockets_are_closed_on_every_error_path: rule docs/contract.md#entry-points;"
        " read docs/real-coroutines.md#cancellation"
    ),
}


class LeakingCrawler(stage2_generators.Crawler):
    def request(self, url: str, max_size: int) -> Coroutine:
        loop = event_loop.get_running_loop()
        host, port, _ = request_target(url)
        sock = yield from self.connect(host, port, url.startswith("https:"))
        yield from loop.sock_sendall(sock, build_request(url, self.user_agent, {}))
        response = yield from self.read_all(sock, max_size, url)
        sock.close()  # The bug: an error above skips this line (no with, no finally).
        return response


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, LeakingCrawler)
    shape = "generators"
