"""Stage 1 step by step: small programs that grow into the callback crawler.

Each module is a complete program, the one before plus one idea, and runs
against the local test site (``python -m shared.testsite`` serves it on
http://127.0.0.1:8000/, the default URL of every step):

1. ``blocking``: a blocking fetch.
2. ``threads``: ten blocking fetches at once, a thread each.
3. ``nonblocking``: a non-blocking socket and a busy loop.
4. ``callback``: ``selectors`` and a callback when the socket is ready.
5. ``fetcher``: a ``Fetcher`` class, many fetches, a loop that stops at the end.
6. ``crawl``: the Fetcher parses links and crawls the whole site.

Run one with ``python -m stage1_callbacks.steps.blocking [URL]``.
"""
