"""A solution: ``SADD`` decides, in the server, which crawler queues a URL.

Two crawlers that find the same link both send ``SADD``; the server runs
one command after the other, so exactly one of them gets 1 and queues
the URL.  A crawler that dies between ``SADD`` and ``RPUSH`` would lose
the URL: the chapter's frontier runs both in one Lua script, which the
server runs whole.
"""

import redis

QUEUE = "crawl:queue"
SEEN = "crawl:seen"


class SharedQueue:
    """A crawler's view of the queue it shares with other crawlers."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client

    def add_url(self, url: str) -> bool:
        """Queue ``url`` unless it was seen; return True if it was new."""
        if not self.client.sadd(SEEN, url):  # 0: some crawler had it.
            return False
        self.client.rpush(QUEUE, url)
        return True

    def take(self) -> str | None:
        """Return the next URL of the shared queue, or None if it is empty."""
        url = self.client.lpop(QUEUE)
        return None if url is None else url.decode()
