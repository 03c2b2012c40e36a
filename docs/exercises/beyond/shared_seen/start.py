"""Exercise: one seen set for every crawler, kept in Valkey.

Two crawlers share one queue, a Valkey list.  But each keeps the URLs it
has seen in a set of its own, in its own memory: when both find a link
to the same page, both queue it, and the page is fetched twice.  Keep
the seen set in the server instead, where every crawler asks the same
set.  One command both checks and adds, in one step that no other
client can cut in two: ``SADD`` answers 1 if it added the URL, 0 if the
URL was in the set already.
"""

import redis

QUEUE = "crawl:queue"
SEEN = "crawl:seen"


class SharedQueue:
    """A crawler's view of the queue it shares with other crawlers."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client
        self.seen: set[str] = set()  # This crawler's own: the trouble.

    def add_url(self, url: str) -> bool:
        """Queue ``url`` unless it was seen; return True if it was new."""
        if url in self.seen:
            return False
        self.seen.add(url)
        self.client.rpush(QUEUE, url)
        return True

    def take(self) -> str | None:
        """Return the next URL of the shared queue, or None if it is empty."""
        url = self.client.lpop(QUEUE)
        return None if url is None else url.decode()
