"""Step 8 of stage 2: a first ``timeout``, a deadline for a whole block.

``async with timeout(seconds):`` starts a timer.  If it fires before the
block ends, it cancels the task that runs the block: CancelledError is
thrown in wherever the block waits, and travels out of it, running every
``finally`` on the way.  Only at the block's end does ``__aexit__`` turn
it into TimeoutError.  Nothing in the block needs to know about the
deadline.  Here each of step 7's fetches gets ten seconds, and an hour's
sleep a tenth of one.

Still wrong: after its deadline it takes any CancelledError for its own,
so a cancellation from outside (or an outer timeout's) becomes a
TimeoutError here; it never takes its cancel() back, so the task stays
marked as being cancelled; and its deadline cannot be moved.  The
finished ``timeouts.py`` counts the requests to cancel a task instead.
"""

import time
from types import TracebackType

from shared.steps import Progress, some_pages, url_from_argv
from stage2_generators.futures import CancelledError
from stage2_generators.loop import get_running_loop, run
from stage2_generators.steps.taskgroup import TaskGroup, fetch
from stage2_generators.tasks import current_task, sleep


class timeout:  # Lower case, as the name asyncio gives it.
    """Cancel the block if it has not ended ``delay`` seconds from now."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.expired = False

    async def __aenter__(self) -> "timeout":
        task = current_task()  # The task that runs the block.
        assert task is not None, "a timeout is entered inside a task"
        self.task = task
        loop = get_running_loop()
        self.timer = loop.call_later(self.delay, self.expire)
        return self

    def expire(self) -> None:
        self.expired = True
        self.task.cancel()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.timer.cancel()  # Ended in time, or by another error.
        if self.expired and exc_type is CancelledError:
            raise TimeoutError from exc


async def fetch_in_time(url: str, progress: Progress) -> None:
    async with timeout(10):
        await fetch(url, progress)


async def main(urls: list[str]) -> None:
    progress = Progress()
    async with TaskGroup() as group:
        for url in urls:
            group.create_task(fetch_in_time(url, progress))
    seconds = progress.seconds()
    start = time.perf_counter()
    try:
        async with timeout(0.1):
            await sleep(3600)
    except TimeoutError:
        late = time.perf_counter() - start
        pages = f"{len(urls)} pages in {seconds:.3f} s"
        print(f"{pages}; an hour's sleep: TimeoutError after {late:.1f} s")


if __name__ == "__main__":
    run(main(some_pages(url_from_argv())))
