"""The fetch raises TimeoutError against a silent server, and still fetches.

The fetch runs in a thread of the test, so that a fetch that waits
forever fails the test after a deadline instead of hanging it.
"""

import gc
import threading
from collections.abc import Callable
from types import ModuleType

import pytest

from tests.servers import PageServer, silent_server

# A fetch that never gave up is let go when the silent server closes, and
# the socket it leaves open is not what these tests grade.
pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

TIMEOUT = 0.2  # What the test asks of fetch.
DEADLINE = 5.0  # Seconds the test waits for fetch; never reached if it works.


def outcome(
    fetch: Callable[[], bytes], threads: list[threading.Thread] | None = None
) -> bytes | BaseException | None:
    """Run ``fetch`` in a thread; return what it returned or raised, or None.

    The thread is added to ``threads`` when that list is given.
    """
    result: list[bytes | BaseException] = []

    def run() -> None:
        try:
            result.append(fetch())
        except BaseException as error:  # Handed to the test.
            result.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    if threads is not None:
        threads.append(thread)
    thread.join(DEADLINE)
    return result[0] if result else None


def test_a_silent_server_raises_timeout_error(exercise: ModuleType) -> None:
    threads: list[threading.Thread] = []
    with silent_server() as url:
        got = outcome(lambda: exercise.fetch(url, TIMEOUT), threads)
    # What the fetch left behind is freed within this test, not a later one.
    threads[0].join(DEADLINE)
    gc.collect()
    assert got is not None, (
        f"fetch() was still waiting {DEADLINE:.0f} s after asking a server "
        f"that never answers: give the socket a timeout of {TIMEOUT} s "
        f"(socket.create_connection(..., timeout=...) or sock.settimeout)"
    )
    assert isinstance(got, TimeoutError), (
        f"fetch() should raise TimeoutError, not {got!r}"
    )


def test_a_page_still_arrives_whole(exercise: ModuleType) -> None:
    body = b"<p>" + b"x" * 100_000 + b"</p>"
    with PageServer() as pages:
        url = pages.add_page("/", body=body)
        got = outcome(lambda: exercise.fetch(url, TIMEOUT))
    assert isinstance(got, bytes), f"fetch() of a page gave {got!r}"
    assert got.startswith(b"HTTP/1.") and got.endswith(body), (
        "fetch() should return the whole response, head and body"
    )
