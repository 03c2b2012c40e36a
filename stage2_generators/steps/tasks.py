"""Step 5 of stage 2: a Task that is itself a Future.

So far a Task lost its coroutine's return value, and its errors escaped
into the loop.  Now a ``Task`` is a ``Future`` of the coroutine's outcome:
``_step`` sets the result or the exception, and ``yield from task`` waits
for it, where ``_wakeup`` throws in the task's error, if any.

Still wrong: no cancellation, no timer (a server that never answers is
waited for forever), and callbacks still run inline, from inside
``set_result``.  The finished stage, ``stage2_generators``, adds them.
"""

import selectors

from shared.steps import Progress, some_pages, url_from_argv
from stage1_callbacks.steps.callback import loop
from stage2_generators.steps import yield_from
from stage2_generators.steps.future import Future
from stage2_generators.steps.yield_from import Coroutine, fetch_and_print


# --8<-- [start:task]
class Task(yield_from.Future):
    """Run a coroutine; end, as a Future, with what it returns or raises."""

    def __init__(self, coro: Coroutine) -> None:
        super().__init__()
        self._coro = coro
        self._done = False
        self._exception: Exception | None = None
        self._step()

    def _step(self, exc: Exception | None = None) -> None:
        """Run the coroutine until it yields a future, returns or raises."""
        try:
            if exc is None:
                result = self._coro.send(None)
            else:
                result = self._coro.throw(exc)  # Raised where it waits.
        except StopIteration as stop:
            self._done = True
            self.set_result(stop.value)  # Returned: run our callbacks.
        except Exception as error:
            self._done, self._exception = True, error
            self.set_result()  # Raised: kept for whoever waits for us.
        else:
            self._wait_on(result)

    def _wait_on(self, future: Future) -> None:
        """Park the task on ``future``: the next step waits until it is done."""
        future.add_done_callback(self._wakeup)

    def _wakeup(self, future: Future) -> None:
        """Take the next step, throwing in ``future``'s error if it failed."""
        try:
            future.result()
        except Exception as error:
            self._step(error)
        else:
            self._step()  # Future.__iter__ reads the result itself.

    def result(self) -> object:
        if self._exception is not None:
            raise self._exception
        return self._result

    def __iter__(self) -> Coroutine:
        if not self._done:
            yield self  # Up to the Task that waits for this one.
        return self.result()
        # --8<-- [end:task]


def fetch_all(
    urls: list[str], selector: selectors.BaseSelector, progress: Progress
) -> Coroutine:
    """Fetch ``urls`` at once, a task each; return how many failed."""
    tasks = {
        url: Task(fetch_and_print(url, selector, progress)) for url in urls
    }
    failed = 0
    for url, task in tasks.items():
        try:
            yield from task  # Its result, or the error it raised.
        except OSError as error:
            print(f"{progress.seconds():6.3f} s  {type(error).__name__} {url}")
            failed += 1
    return failed


if __name__ == "__main__":
    progress = Progress()
    selector = selectors.DefaultSelector()
    urls = some_pages(url_from_argv())
    main = Task(fetch_all(urls, selector, progress))
    running = {"main"}
    main.add_done_callback(lambda _: running.clear())  # The loop stops.
    loop(selector, running)
    failed = main.result()  # Or raise what main raised.
    print(f"{len(urls)} pages, {failed} failed, in {progress.seconds():.3f} s")
