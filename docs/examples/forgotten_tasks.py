"""What asyncio says about tasks that nobody awaits.

Two tasks are started and forgotten.  One fails, and since nobody ever asks
for its result, its exception is reported only when the task is freed:
"Task exception was never retrieved".  The other waits on a future that
nothing will ever resolve; once the last reference to it is gone, the
garbage collector frees it while it is still pending: "Task was destroyed
but it is pending!".  Both messages go to the ``asyncio`` logger, which
writes them on stderr (here on stdout, in order with the program's own
lines), long after and far from the line that made the task.

Run it from the repository root::

    python docs/examples/forgotten_tasks.py
"""

import asyncio
import gc
import logging
import sys


async def fetch_missing_page() -> None:
    raise ValueError("404 for /missing/")


async def wait_forever() -> None:
    await asyncio.get_running_loop().create_future()  # Nothing will resolve it.


async def main() -> None:
    asyncio.create_task(fetch_missing_page())  # The task is not even kept.
    await asyncio.sleep(0)  # It runs, fails, and is freed at once.
    print("the failed task is gone")
    task = asyncio.create_task(wait_forever())
    await asyncio.sleep(0)  # It runs up to its await and waits.
    del task
    gc.collect()  # The task, its coroutine and its future only refer to each other.
    print("the waiting task is gone")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        sys.exit("usage: python docs/examples/forgotten_tasks.py")
    logging.basicConfig(stream=sys.stdout, format="%(message)s")
    asyncio.run(main())
