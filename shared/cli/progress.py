"""The live progress line on stderr, shared by both halves of the command line."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def progress(crawler: Any, interval: float = 0.25) -> Iterator[None]:
    """Show a live one-line progress display on stderr, if it is a terminal."""
    if not sys.stderr.isatty():
        yield
        return
    stop = threading.Event()

    def show() -> None:
        while not stop.wait(interval):
            sys.stderr.write("\r" + progress_line(crawler) + "\033[K")
            sys.stderr.flush()

    thread = threading.Thread(target=show, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        sys.stderr.write("\r\033[K")


def progress_line(crawler: Any) -> str:
    """Return 'done / queued / in flight / rate' for a running crawl."""
    done, in_flight = len(crawler.done), crawler.in_flight
    queued = max(len(crawler.seen_urls) - done - in_flight, 0)
    elapsed = max(time.time() - crawler.t0, 1e-9)
    return f"done {done} | queued {queued} | in flight {in_flight} | {done / elapsed:.1f} urls/s"
