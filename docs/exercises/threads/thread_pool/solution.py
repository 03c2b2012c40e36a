"""A solution: ``workers`` threads take URLs from one queue.

``queue.Queue`` does the locking: two threads never get the same URL.
Each thread stops when the queue is empty; every URL is in it before the
first thread starts, so an empty queue means there is nothing left.
"""

import queue
import threading
from collections.abc import Callable


def fetch_all(
    urls: list[str], fetch: Callable[[str], bytes], workers: int
) -> dict[str, bytes]:
    """Return ``{url: fetch(url)}`` for every URL, ``workers`` at a time."""
    todo: queue.Queue[str] = queue.Queue()
    for url in urls:
        todo.put(url)
    results: dict[str, bytes] = {}

    def work() -> None:
        while True:
            try:
                url = todo.get_nowait()
            except queue.Empty:
                return  # Nothing left: this thread ends.
            results[url] = fetch(url)  # One key per thread: no lock needed.

    threads = [threading.Thread(target=work) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results
