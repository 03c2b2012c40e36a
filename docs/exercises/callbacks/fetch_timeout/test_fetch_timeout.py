"""The Fetcher gives up on a silent server, and leaves no timer otherwise.

The loop runs until the Fetcher is done, with a guard timer of the test
that stops it after a deadline: a Fetcher that never gives up fails the
test instead of hanging it.
"""

from collections.abc import Iterator
from types import ModuleType

import pytest

from stage1_callbacks.loop import EventLoop
from tests.servers import PageServer, silent_server

TIMEOUT = 0.2  # What the test asks of the Fetcher.
DEADLINE = 5.0  # Seconds the loop may run; never reached if it works.


@pytest.fixture
def loop() -> Iterator[EventLoop]:
    """A stage 1 loop; closes the sockets a Fetcher left registered."""
    loop = EventLoop()
    yield loop
    for key in list(loop.selector.get_map().values()):
        loop.selector.unregister(key.fileobj)
        key.fileobj.close()  # type: ignore[union-attr]
    loop.close()


def run(loop: EventLoop, exercise: ModuleType, url: str) -> list[object]:
    """Fetch ``url``; return what the Fetcher handed to ``on_done``."""
    outcomes: list[object] = []

    def on_done(outcome: object) -> None:
        outcomes.append(outcome)
        loop.stop()

    exercise.Fetcher(loop, url, TIMEOUT, on_done).fetch()
    guard = loop.call_later(DEADLINE, loop.stop)
    loop.run()
    guard.cancel()
    return outcomes


def test_a_silent_server_ends_in_timeout_error(
    loop: EventLoop, exercise: ModuleType
) -> None:
    with silent_server() as url:
        outcomes = run(loop, exercise, url)
    assert outcomes, (
        f"on_done was not called in {DEADLINE:.0f} s of a server that never "
        f"answers: in fetch(), set a timer, self.loop.call_later("
        f"self.timeout, ...), whose callback gives up"
    )
    assert isinstance(outcomes[0], TimeoutError), (
        f"on_done should get a TimeoutError, not {outcomes[0]!r}"
    )
    assert not loop.selector.get_map(), (
        "the socket is still registered after the timeout: unregister it "
        "and close it when giving up"
    )


def test_a_page_in_time_leaves_no_timer_behind(
    loop: EventLoop, exercise: ModuleType
) -> None:
    with PageServer() as pages:
        url = pages.add_page("/", body=b"hello")
        outcomes = run(loop, exercise, url)
    assert len(outcomes) == 1 and isinstance(outcomes[0], bytes), outcomes
    assert outcomes[0].endswith(b"hello"), "the whole response, please"
    pending = [handle for _, _, handle in loop.timers if not handle.cancelled]
    assert not pending, (
        "a timer is still set after the page arrived: cancel it when the "
        "fetch ends (call_later returns a handle with cancel()), or it "
        "gives up later on a fetch that is done"
    )
