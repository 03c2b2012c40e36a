"""Run stage 3's step against a site whose pages answer with garbage.

The home page is a real page with links to twenty others; each of those
answers with bytes that are not HTTP.  The script serves that site and
runs the step's ``Crawler`` on it, in one program, on one loop.  Each
failed fetch ends the worker that made it, so once ``max_tasks`` of them
have failed no worker is left, URLs are still queued, and ``crawl()``
waits in ``q.join()`` for ever.  The script does not wait for ever: it
waits until every worker has ended (that much is certain, however slow
the machine), says what it sees, and cancels the crawl.

With ``--finished`` it runs the finished stage 3 on the same site instead,
which records every URL and ends.  Run it from the repository root::

    python docs/examples/garbage_pages.py
    python docs/examples/garbage_pages.py --finished
"""

import asyncio
import collections
import logging
import sys
import threading

from stage3_asyncio import crawler as finished
from stage3_asyncio.steps.crawl import Crawler

LINKS = 20  # More than max_tasks: URLs are left when the workers are gone.
HOME = "".join(f'<a href="/pages/{n}/">{n}</a>' for n in range(LINKS)).encode()
PAGE = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n" + HOME
GARBAGE = b"this is not HTTP\r\n\r\n"


async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answer one request: the home page, or garbage for any other path."""
    request = await reader.readuntil(b"\r\n\r\n")
    writer.write(PAGE if request.startswith(b"GET / ") else GARBAGE)
    writer.close()
    await writer.wait_closed()


async def watch_the_step() -> None:
    """Serve the site, start the step on it, and watch its workers end."""
    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    crawler = Crawler(f"http://127.0.0.1:{port}/")
    crawl = asyncio.create_task(crawler.crawl())
    await asyncio.sleep(0)  # crawl() starts its workers and waits in join().
    tasks = asyncio.all_tasks()
    workers = [t for t in tasks if getattr(t.get_coro(), "__qualname__", "") == "Crawler.work"]
    await asyncio.wait(workers)  # Every worker ends, on a fetch that raised.
    errors = {type(worker.exception()).__name__ for worker in workers}
    print(f"all {len(workers)} workers have ended, raising {', '.join(sorted(errors))}")
    print(f"{crawler.q.qsize()} URLs are still queued; crawl() done: {crawl.done()}")
    crawl.cancel()  # Without this, the step waits in q.join() for ever.
    await asyncio.gather(crawl, return_exceptions=True)
    server.close()
    await server.wait_closed()


def run_the_finished_stage() -> None:
    """Serve the site on a loop in a thread, and crawl it with stage 3."""
    # The stage logs a line for each URL that failed; the count below sums them up.
    logging.getLogger("stage3_asyncio").addHandler(logging.NullHandler())
    loop = asyncio.new_event_loop()
    start = asyncio.start_server(answer, "127.0.0.1", 0)
    server = loop.run_until_complete(start)
    thread = threading.Thread(target=loop.run_forever)
    thread.start()
    try:
        port = server.sockets[0].getsockname()[1]
        done = finished.crawl(f"http://127.0.0.1:{port}/", max_tries=2).done
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        server.close()
        loop.run_until_complete(server.wait_closed())
        loop.close()
    kinds = collections.Counter(
        type(stat.exception).__name__ if stat.exception else str(stat.status) for stat in done
    )
    print(f"{len(done)} URLs recorded:", ", ".join(f"{n} {kind}" for kind, n in kinds.items()))


if __name__ == "__main__":
    if sys.argv[1:] == ["--finished"]:
        run_the_finished_stage()
    elif len(sys.argv) > 1:
        sys.exit("usage: python docs/examples/garbage_pages.py [--finished]")
    else:
        asyncio.run(watch_the_step())
