"""The benchmark of issue 7: the chapter's claims, measured on this machine.

``python -m shared.bench`` serves the test site from a process of its own,
runs each crawler in a fresh subprocess (so its memory and file descriptors
are its own), and writes a Markdown summary and SVG charts (English and
Chinese) to ``docs/bench``.
Four scenarios, each figure a median of several runs:

1. throughput: pages per second on a 10 000-page site with no latency;
2. concurrency: wall time against a simulated ideal crawler at 100 ms latency;
3. memory: RSS per in-flight fetch, 1 000 and 10 000 fetches at once;
4. C10K: 10 000 concurrent connections, all completed.

Modules: ``sitegraph`` (the site's link graph, fetched in-process),
``simulate`` (the ideal crawler), ``threads`` (the blocking thread-pool
crawler, the chapter's "traditional way"), ``serve`` and ``slow`` (the two
servers), ``run_one`` (one crawl in a subprocess), ``others`` (Scrapy, wget
and the load tool), ``parsers`` (the link parser's cost), ``scenarios`` and
``report``.
"""
