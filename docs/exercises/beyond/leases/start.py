"""Exercise: a frontier that hands out URLs on lease.

A crawler that takes a URL and then dies (killed, out of memory, its
machine rebooted) never reports it done.  With this frontier the URL is
lost: ``take`` removes it for good.  Lease it instead: ``take(now)``
notes that the URL is out until ``now + lease``, ``done(url)`` ends the
lease, and a URL whose lease has run out is handed out again by a later
``take``.  The time is passed in (``now``, in seconds), so that the
frontier needs no clock.
"""

import collections


class Frontier:
    """The URLs still to fetch, handed out one at a time."""

    def __init__(self, lease: float) -> None:
        self.lease = lease  # Seconds a crawler has to finish a URL.
        self.queue: collections.deque[str] = collections.deque()

    def add(self, url: str) -> None:
        """Queue ``url`` to be fetched."""
        self.queue.append(url)

    def take(self, now: float) -> str | None:
        """Return the next URL to fetch, or None if there is none now."""
        return self.queue.popleft() if self.queue else None

    def done(self, url: str) -> None:
        """Note that ``url`` has been fetched."""
