"""The benchmark of issue 7: the chapter's claims, measured on this machine.

``python -m shared.bench`` serves the test site from a process of its own,
runs each crawler in a fresh subprocess (so its memory and file descriptors
are its own), and writes a Markdown summary and SVG charts (English and
Chinese) to ``docs/bench``.  The scenarios of the full run, each figure a
median of several runs:

1. throughput: pages per second on a 10 000-page site with no latency;
2. concurrency: wall time against a simulated ideal crawler at 100 ms latency;
3. parsers: what finding the links of a page costs, with each HTML parser;
4. tracing: CPU per page with a trace and without;
5. memory: RSS per in-flight fetch, 1 000 and 10 000 fetches at once, the
   10 000 being the C10K test (every connection completed);
6. instructions: instructions per request of each crawler, counted by
   callgrind, each stage beside its floor (a bare loop with the stages'
   HTTP code and parser): the CPU targets are set on these counts;
7. scale: CPU and memory per URL of ``crawl --simulate --stream`` on sites
   of 10 000 to 1 000 000 pages, and what holds the bytes.

Three runs of their own: ``--only servers`` (stage 2's HTTP server beside
aiohttp.web, into ``docs/bench/servers``), ``python -m
shared.bench.frontier`` (stage 3 on processes sharing a frontier) and
``python -m shared.bench.recrawl`` (what a recrawl saves, run by the docs
build).

``python -m shared.bench.instructions CRAWLER`` counts the instructions of
one request with callgrind, a figure a busy machine does not blur: for
judging a change before the quiet run.  ``python -m
shared.bench.frontier_memory`` measures what a Valkey server holds for
each URL of a crawl through the frontier, and the capacity that follows.

Modules: ``sitegraph`` (the site's link graph, fetched in-process),
``simulate`` (the ideal crawler), ``threads`` (the blocking thread-pool
crawler, the chapter's "traditional way"), ``serve`` and ``slow`` (the two
servers), ``run_one`` (one crawl in a subprocess), ``others`` (Scrapy, wget
and the load tool), ``parsers``, ``tracing``, ``servers``, ``frontier``,
``recrawl``, ``instructions`` and ``scale`` (one scenario each, with
``scale_one`` for one crawl of the last), ``floor_selectors`` and
``floor_aiohttp`` (the floors), ``scenarios`` (the other three),
``report`` and ``texts`` (the summary, in English and Chinese).
"""
