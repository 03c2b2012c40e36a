"""Step 2: many blocking fetches at once, one thread each.

The fetch of step 1 is unchanged.  Each URL gets its own thread, and the
operating system switches between them whenever one waits, so the waits
overlap: ten pages take about as long as the slowest one.

Still wrong: every fetch in flight holds a whole thread, with its own
stack, for as long as it waits.  A crawler with thousands of requests in
flight pays for thousands of threads (the measurements page shows how
much).  The next step, ``nonblocking``, waits without a thread.
"""

import sys
import threading
import time

from shared.steps import some_pages, status_line, url_from_argv
from stage1_callbacks.steps.blocking import fetch


def fetch_and_print(url: str) -> None:
    """Fetch ``url`` and print its status line: what each thread does."""
    # One write with its newline: print() writes the end of line separately,
    # and another thread's line could slip in between.
    sys.stdout.write(f"{status_line(fetch(url))} {url}\n")


if __name__ == "__main__":
    start = time.perf_counter()
    urls = some_pages(url_from_argv())
    threads = []
    for url in urls:
        thread = threading.Thread(target=fetch_and_print, args=(url,))
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()  # Wait until that thread's fetch is done.
    seconds = time.perf_counter() - start
    print(f"{len(urls)} pages in {seconds:.3f} s, a thread each")
