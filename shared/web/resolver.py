"""Name lookups for stages 1 and 2: a blocking ``getaddrinfo``, asked once per host.

``socket.getaddrinfo`` blocks: while it waits for a DNS server, an event
loop that calls it waits too, and so does every fetch in flight.  The
operating system offers no non-blocking way to ask, which is why asyncio
runs ``getaddrinfo`` in a thread pool (``loop.getaddrinfo``), and why
aiohttp's connector does the same.  Stages 1 and 2 have no threads, so they
only make the cost rare: one lookup per host and port for a whole crawl.
A failed lookup is not remembered, so a retry asks again.
"""

from __future__ import annotations

import socket
from typing import Any

from shared.web.urls import UrlPolicy

Address = tuple[int, int, tuple[Any, ...]]  # (family, proto, sockaddr) for socket() and connect().


class Resolver:
    """Look host names up and remember the answers for the rest of a crawl.

    With a ``policy``, only the addresses it allows are returned (see
    ``UrlPolicy.allowed_addresses``): a crawl of public sites connects to
    no address of the crawling machine's own network.
    """

    def __init__(self, policy: UrlPolicy | None = None) -> None:
        self.addresses: dict[tuple[str, int], list[Address]] = {}
        self.policy = policy

    def resolve(self, host: str, port: int) -> list[Address]:
        """Return the addresses of ``host``, in the order the system prefers them.

        Raises socket.gaierror (an OSError) when the name does not resolve,
        also for a name that IDNA cannot encode, and PrivateAddress when
        the policy allows none of its addresses.
        """
        key = (host, port)
        if key not in self.addresses:
            # An ASCII name goes as bytes: given a str, Python would first load
            # its IDNA codec (about 250 KB of tables) only to leave it as it is.
            name = host.encode("ascii") if host.isascii() else host
            try:
                infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
            except UnicodeError as error:  # A name that IDNA cannot encode.
                message = f"bad host name {host!r}: {error}"
                raise socket.gaierror(socket.EAI_NONAME, message) from None
            self.addresses[key] = [(family, proto, addr) for family, _, proto, _, addr in infos]
        found = self.addresses[key]
        if self.policy is None:
            return found
        allowed = self.policy.allowed_addresses(host, [addr[0] for _, _, addr in found])
        return [address for address in found if address[2][0] in allowed]
