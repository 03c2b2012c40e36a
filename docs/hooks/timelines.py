"""Run one crawl of the docs' figures with a trace, and write the trace to a file.

The build hook (command_output.py) runs it once per figure, against its own
test site::

    python docs/hooks/timelines.py NAME OUT.json URL

NAME is a finished stage (``callbacks``, ``generators``, ``asyncio``), the
thread crawler of the threads chapter (``threads``), a step (``fetcher-step``
of stage 1, ``crawl-step`` of stage 2), or one way of the blocking-call
example (``blocking``, ``to-thread``), or the racy crawler of the
simulation chapter under seed 0 and under the first seed that breaks it
(``race-passing``, ``race-failing``, in simulated time).  The stages record themselves
(``trace=``); the steps and the example are small programs that know
nothing of traces, so this script watches them from outside: a selector
that notes each ``select()`` and which socket woke, and subclasses that
note where each fetch begins and ends.  For asyncio, the loop gets the same
selector (``asyncio.SelectorEventLoop(selector)``), so stage 3's figure
has a loop row too, which ``crawl --trace`` cannot give.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import importlib
import importlib.util
import io
import selectors
import sys
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

from shared.record.trace import PHASES, Trace

MAX_TASKS = 5  # A handful of workers: few enough rows to read.


class WatchingSelector(selectors.DefaultSelector):  # type: ignore[misc,valid-type]
    """A selector that tells a recorder of each select() and each fetch's socket.

    ``url`` is the URL whose fetch registers its socket next; a socket
    registered to be read is waiting for the answer, and the first time
    select() finds it readable the answer is being read.
    """

    def __init__(self, recorder: Trace) -> None:
        super().__init__()
        self.recorder = recorder
        self.url = ""
        self.urls: dict[int, str] = {}  # Socket descriptor -> URL of its fetch.

    def register(self, fileobj: Any, events: int, data: Any = None) -> Any:
        fd = fileobj if isinstance(fileobj, int) else fileobj.fileno()
        if events == selectors.EVENT_WRITE and self.url:  # A new connection.
            self.urls[fd], self.url = self.url, ""
        if events == selectors.EVENT_READ and fd in self.urls:
            self.advance(self.urls[fd], "wait")
        return super().register(fileobj, events, data)

    def select(self, timeout: float | None = None) -> list[Any]:
        self.recorder.waiting()
        ready = super().select(timeout)
        self.recorder.woke(len(ready))
        for key, mask in ready:
            url = self.urls.get(key.fd)
            if url is not None:
                self.advance(url, "send" if mask & selectors.EVENT_WRITE else "read")
        return ready

    def advance(self, url: str, phase: str) -> None:
        """Move the fetch of ``url`` on to ``phase``, never back."""
        fetch = self.recorder.latest.get(url)
        now = fetch.phase() if fetch is not None else None
        if now is not None and PHASES.index(phase) > PHASES.index(now):
            self.recorder.phase(url, phase)


def stage(module: str) -> Callable[[str, str], None]:
    """Return a runner of a finished stage's crawl(), which records itself."""

    def run(url: str, out: str) -> None:
        importlib.import_module(module).crawl([url], max_tasks=MAX_TASKS, trace=out)

    return run


def asyncio_stage(url: str, out: str) -> None:
    """Crawl with stage 3 on an asyncio loop whose selector is watched."""
    from stage3_asyncio import Crawler

    crawler = Crawler([url], max_tasks=MAX_TASKS, trace=out)
    loop = asyncio.SelectorEventLoop(WatchingSelector(crawler.recorder))
    try:
        loop.run_until_complete(crawler.crawl())
    finally:
        loop.close()
    crawler.save_trace()


def fetcher_step(url: str, out: str) -> None:
    """Run stage 1's fetcher step: ten Fetchers, on a watched selector."""
    from shared.steps import some_pages
    from stage1_callbacks.steps import fetcher
    from stage1_callbacks.steps.callback import loop

    recorder = Trace("stage1_callbacks.steps.fetcher")
    selector = WatchingSelector(recorder)

    class WatchedFetcher(fetcher.Fetcher):
        def fetch(self) -> None:
            recorder.begin(self.url)
            selector.url = self.url
            super().fetch()

        def finish(self) -> None:
            super().finish()
            recorder.end(self.url)

    todo = set(some_pages(url))
    for page in sorted(todo):
        WatchedFetcher(page, selector, todo).fetch()
    loop(selector, todo)
    recorder.write(out)


def crawl_step(url: str, out: str) -> None:
    """Run stage 2's crawl step, each worker on a lane of its own."""
    from stage2_generators.steps import crawl
    from stage2_generators.steps.queues import run

    recorder = Trace("stage2_generators.steps.crawl")
    selector = WatchingSelector(recorder)

    lane: contextvars.ContextVar[str] = contextvars.ContextVar("lane")

    class WatchedCrawler(crawl.Crawler):
        workers = 0

        def work(self) -> Generator[Any, Any, Any]:
            self.workers += 1
            return (yield from named(super().work(), f"worker {self.workers}"))

        def fetch(self, url: str) -> Generator[Any, Any, Any]:
            recorder.begin(url, lane.get())
            selector.url = url
            try:
                return (yield from super().fetch(url))
            finally:
                recorder.end(url)

    def named(coro: Generator[Any, Any, Any], name: str) -> Generator[Any, Any, Any]:
        """Run ``coro`` in a context of its own, where ``lane`` is ``name``.

        One attribute set at each resume would not do: a future runs its
        callbacks at once, so a worker's ``put_nowait`` resumes a waiting
        worker inside it, and the attribute would name the one resumed
        last.  Each worker carries its context instead, as an asyncio Task
        does, and every step of it runs inside that context.
        """
        context = contextvars.copy_context()
        context.run(lane.set, name)
        value = None
        while True:
            try:
                future = context.run(coro.send, value)
            except StopIteration as stop:
                return stop.value
            value = yield future

    crawler = WatchedCrawler(url, max_tasks=MAX_TASKS)
    crawler.selector.close()
    crawler.selector = selector
    run(selector, crawler.crawl())
    recorder.write(out)


def blocking_example(way: str) -> Callable[[str, str], None]:
    """Return a runner of one way of docs/examples/blocking_call.py, ten tasks."""

    def run(url: str, out: str) -> None:
        path = Path(__file__).parents[1] / "examples" / "blocking_call.py"
        spec = importlib.util.spec_from_file_location("blocking_call", path)
        assert spec is not None and spec.loader is not None
        example = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(example)
        recorder = Trace(f"blocking_call.{way}")

        async def traced(url: str) -> None:
            recorder.begin(url, asyncio.current_task())
            try:
                await getattr(example, way)(url)
            finally:
                recorder.end(url)

        async def main() -> None:
            await asyncio.gather(*(traced(page) for page in example.some_pages(url)))

        loop = asyncio.SelectorEventLoop(WatchingSelector(recorder))
        try:
            loop.run_until_complete(main())
        finally:
            loop.close()
        for fetch in recorder.fetches:
            fetch.marks = []  # urllib does all of it, unseen: no phases to tell apart.
        recorder.write(out)

    return run


def racy_robots(failing: bool) -> Callable[[str, str], None]:
    """Return a runner of docs/examples/racy_robots.py: seed 0, or the first seed that fails.

    It needs no site: the example serves its own, in a simulated world.
    """

    def run(url: str, out: str) -> None:
        path = Path(__file__).parents[1] / "examples" / "racy_robots.py"
        spec = importlib.util.spec_from_file_location("racy_robots", path)
        assert spec is not None and spec.loader is not None
        example = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(example)
        seed = next(seed for seed in range(100) if example.asked_twice(seed)) if failing else 0
        example.crawl(seed, trace=out)

    return run


RUNS: dict[str, Callable[[str, str], None]] = {
    "threads": stage("shared.bench.threads"),
    "callbacks": stage("stage1_callbacks"),
    "generators": stage("stage2_generators"),
    "asyncio": asyncio_stage,
    "fetcher-step": fetcher_step,
    "crawl-step": crawl_step,
    "blocking": blocking_example("blocking"),
    "to-thread": blocking_example("in_a_thread"),
    "race-passing": racy_robots(failing=False),
    "race-failing": racy_robots(failing=True),
}


def main() -> None:
    """Run the named crawl and write its trace; what the programs print is dropped."""
    if len(sys.argv) != 4 or sys.argv[1] not in RUNS:
        sys.exit(f"usage: python docs/hooks/timelines.py {{{','.join(RUNS)}}} OUT.json URL")
    name, out, url = sys.argv[1:]
    with contextlib.redirect_stdout(io.StringIO()):
        RUNS[name](url, out)


if __name__ == "__main__":
    main()
