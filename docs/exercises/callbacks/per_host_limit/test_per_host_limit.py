"""No host has more than ``per_host`` fetches in flight; hosts do not wait.

Two local servers play two hosts (same address, two ports).  The test
counts connections from the client's side: every socket that connects is
in flight until it is closed.  That count does not depend on timing: a
crawler that starts every Fetcher at once has them all open before the
loop reads the first answer.
"""

import socket
import urllib.parse
from collections import Counter
from collections.abc import Iterator
from types import ModuleType

import pytest

from tests.servers import PageServer

PER_HOST = 2
PAGES = 5  # On each host.


class Connections:
    """The sockets in flight, per port, and the most ever seen."""

    def __init__(self) -> None:
        self.now: Counter[int] = Counter()
        self.most: Counter[int] = Counter()
        self.most_in_all = 0

    def opened(self, port: int) -> None:
        self.now[port] += 1
        self.most[port] = max(self.most[port], self.now[port])
        self.most_in_all = max(self.most_in_all, self.now.total())

    def closed(self, port: int) -> None:
        self.now[port] -= 1


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> Iterator[Connections]:
    """Count the sockets this process connects, while the test runs."""
    seen = Connections()

    class CountedSocket(socket.socket):
        port: int | None = None

        def connect(self, address: object) -> None:
            self.count(address)
            super().connect(address)  # type: ignore[arg-type]

        def connect_ex(self, address: object) -> int:
            self.count(address)
            return super().connect_ex(address)  # type: ignore[arg-type]

        def count(self, address: object) -> None:
            if self.port is None and isinstance(address, tuple):
                self.port = address[1]
                seen.opened(address[1])

        def close(self) -> None:
            if self.port is not None:
                seen.closed(self.port)
                self.port = None
            super().close()

    monkeypatch.setattr(socket, "socket", CountedSocket)
    yield seen


@pytest.fixture
def urls() -> Iterator[list[str]]:
    """The pages of two hosts, in turn: one of host A, one of B..."""
    with PageServer() as a, PageServer() as b:
        pages = []
        for n in range(PAGES):
            pages.append(a.add_page(f"/{n}", body=b"a"))
            pages.append(b.add_page(f"/{n}", body=b"b"))
        yield pages


def test_every_page_is_fetched(
    exercise: ModuleType, urls: list[str], connections: Connections
) -> None:
    results = exercise.fetch_all(urls, PER_HOST)
    assert sorted(results) == sorted(urls), "every URL must be fetched once"
    assert all(line.endswith("200 OK") for line in results.values()), results


def test_no_host_has_more_than_per_host_in_flight(
    exercise: ModuleType, urls: list[str], connections: Connections
) -> None:
    exercise.fetch_all(urls, PER_HOST)
    for port, most in connections.most.items():
        host = f"127.0.0.1:{port}"
        assert most <= PER_HOST, (
            f"{most} fetches to {host} were in flight at once; the limit is "
            f"{PER_HOST} per host: keep the others waiting, and start the "
            f"next one when a Fetcher of that host finishes"
        )


def test_hosts_do_not_wait_for_each_other(
    exercise: ModuleType, urls: list[str], connections: Connections
) -> None:
    exercise.fetch_all(urls, PER_HOST)
    hosts = {urllib.parse.urlsplit(url).netloc for url in urls}
    expected = PER_HOST * len(hosts)
    assert connections.most_in_all >= expected, (
        f"at most {connections.most_in_all} fetches were in flight at once "
        f"over {len(hosts)} hosts: the limit is per host, so each host may "
        f"have {PER_HOST} at the same time ({expected} in all)"
    )
