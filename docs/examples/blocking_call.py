"""A blocking call inside a coroutine stalls every other task; a thread frees the loop.

Ten pages are fetched concurrently with ``urllib.request``, a blocking
HTTP library, three ways: called straight from the coroutines, handed to a
thread with ``asyncio.to_thread``, and handed to the loop's default thread
pool with ``loop.run_in_executor``.  Meanwhile a heartbeat task asks to
wake up every 10 ms, and the longest gap between two of its beats shows how
long the loop could run nothing else.  The measurements are
printed, never asserted: they depend on the machine.

With no URL it serves the test site itself, with 50 ms per answer::

    python docs/examples/blocking_call.py [URL]
"""

import asyncio
import itertools
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable

from shared.testsite.server import ServerThread, make_app
from stage1_callbacks.steps.threads import some_pages


# --8<-- [start:fetches]
def get(url: str) -> int:
    """Fetch ``url`` with a blocking library; return the status."""
    with urllib.request.urlopen(url) as response:
        response.read()
        return response.status


async def blocking(url: str) -> int:
    return get(url)  # The loop can do nothing else until get() returns.


async def in_a_thread(url: str) -> int:
    return await asyncio.to_thread(get, url)


async def in_the_executor(url: str) -> int:
    return await asyncio.get_running_loop().run_in_executor(None, get, url)


# --8<-- [end:fetches]


async def heartbeat(beats: list[float]) -> None:
    """Wake up every 10 ms and note the time of each beat."""
    while True:
        await asyncio.sleep(0.01)
        beats.append(time.perf_counter())


async def measure(fetch: Callable[[str], Awaitable[int]], urls: list[str]) -> str:
    """Fetch ``urls`` concurrently with ``fetch``, beside a heartbeat; say how it went."""
    beats = [time.perf_counter()]
    beat = asyncio.create_task(heartbeat(beats))
    await asyncio.gather(*(fetch(url) for url in urls))
    beats.append(time.perf_counter())
    beat.cancel()
    gap = max(later - earlier for earlier, later in itertools.pairwise(beats))
    seconds = beats[-1] - beats[0]
    return f"{len(urls)} pages in {seconds:.3f} s, longest gap between beats {gap:.3f} s"


async def main(url: str) -> None:
    urls = some_pages(url)
    for fetch in (blocking, in_a_thread, in_the_executor):
        print(f"{fetch.__name__:16} {await measure(fetch, urls)}")


if __name__ == "__main__":
    if len(sys.argv) > 2 or sys.argv[1:2] and sys.argv[1].startswith("-"):
        sys.exit("usage: python docs/examples/blocking_call.py [URL]")
    if len(sys.argv) == 2:
        asyncio.run(main(sys.argv[1]))
    else:
        with ServerThread(make_app(latency=0.05)) as site:
            asyncio.run(main(site.url))
