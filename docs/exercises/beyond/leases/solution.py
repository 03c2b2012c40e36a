"""A solution: a dict of leases, looked through on each ``take``.

``leased`` maps each URL out on lease to the moment its lease ends.
``take`` first puts back at the head of the queue every URL whose lease
has ended, then leases the next one.  ``done`` ends a lease for good.
The chapter's frontier does the same in Valkey, with a sorted set of
leases ordered by their end, so that the expired ones are found without
looking at the others.
"""

import collections


class Frontier:
    """The URLs still to fetch, handed out one at a time, on lease."""

    def __init__(self, lease: float) -> None:
        self.lease = lease  # Seconds a crawler has to finish a URL.
        self.queue: collections.deque[str] = collections.deque()
        self.leased: dict[str, float] = {}  # URL -> when its lease ends.

    def add(self, url: str) -> None:
        """Queue ``url`` to be fetched."""
        self.queue.append(url)

    def take(self, now: float) -> str | None:
        """Return the next URL to fetch, or None if there is none now."""
        for url, ends in list(self.leased.items()):
            if ends <= now:  # Its crawler took too long: it may be dead.
                del self.leased[url]
                self.queue.appendleft(url)
        if not self.queue:
            return None
        url = self.queue.popleft()
        self.leased[url] = now + self.lease
        return url

    def done(self, url: str) -> None:
        """Note that ``url`` has been fetched: its lease ends for good."""
        self.leased.pop(url, None)
