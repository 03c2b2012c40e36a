"""The pool uses ``workers`` threads, runs them side by side, and fetches all.

The fetch is a stand-in that records which thread called it; the first
three calls wait for each other at a barrier, so they must run at once.
"""

import threading
from types import ModuleType

URLS = [f"http://example.test/pages/{n}/" for n in range(12)]
WORKERS = 3
DEADLINE = 10.0  # Seconds; never reached when the pool runs side by side.


class Recorder:
    """A fetch that notes the threads that call it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.threads: set[threading.Thread] = set()
        self.calls = 0
        self.barrier = threading.Barrier(WORKERS, timeout=DEADLINE)
        self.side_by_side = True

    def fetch(self, url: str) -> bytes:
        with self.lock:
            self.threads.add(threading.current_thread())
            self.calls += 1
            first = self.calls <= WORKERS
        if first:  # The first fetches wait until all of them are in.
            try:
                self.barrier.wait()
            except threading.BrokenBarrierError:
                self.side_by_side = False
        return f"page {url}".encode()


def test_the_pool_fetches_every_url(exercise: ModuleType) -> None:
    recorder = Recorder()
    results = exercise.fetch_all(URLS, recorder.fetch, WORKERS)
    assert results == {url: f"page {url}".encode() for url in URLS}, (
        "fetch_all must return {url: what fetch(url) returned} for every URL"
    )


def test_the_pool_uses_workers_threads(exercise: ModuleType) -> None:
    recorder = Recorder()
    exercise.fetch_all(URLS, recorder.fetch, WORKERS)
    count = len(recorder.threads)
    assert count <= WORKERS, (
        f"{count} threads ran the {len(URLS)} fetches: a pool of {WORKERS} "
        f"threads should share them, each taking the next URL when it is "
        f"done with the last"
    )


def test_the_threads_fetch_side_by_side(exercise: ModuleType) -> None:
    recorder = Recorder()
    exercise.fetch_all(URLS, recorder.fetch, WORKERS)
    assert recorder.side_by_side, (
        f"the first {WORKERS} fetches did not run at the same time: start "
        f"all {WORKERS} threads before waiting for any of them"
    )
