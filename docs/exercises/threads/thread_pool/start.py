"""Exercise: a pool of threads.

``fetch_all`` fetches every URL with ``fetch`` and returns what each
fetch returned.  Today it starts one thread per URL, like the threads
step: a thousand URLs, a thousand threads.  Change it so that exactly
``workers`` threads share the URLs: each takes the next URL when it has
finished the last one.
"""

import threading
from collections.abc import Callable


def fetch_all(
    urls: list[str], fetch: Callable[[str], bytes], workers: int
) -> dict[str, bytes]:
    """Return ``{url: fetch(url)}`` for every URL, ``workers`` at a time."""
    results: dict[str, bytes] = {}

    def fetch_one(url: str) -> None:
        results[url] = fetch(url)

    threads = [threading.Thread(target=fetch_one, args=(url,)) for url in urls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results
