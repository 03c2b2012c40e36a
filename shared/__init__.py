"""What the three stages share: everything that is not the lesson of a stage.

The package is in layers, each allowed to import only the ones above it in
this list (``tests/test_layout.py`` holds it to that):

- ``web``: the web as any client meets it: URLs, HTTP framing, links,
  encodings, sitemaps, retries and conditional requests.
- ``record``: what a crawl leaves behind: each URL's outcome, the report,
  the trace and its timeline, the saved pages.
- ``crawl``: the crawl's policy and bookkeeping that every stage's
  ``Crawler`` calls: its options, politeness and robots.txt, what to do
  with each response.
- ``steps``: the plumbing of the chapters' small step programs.
- ``testsite``: the local test site the tutorial crawls, and its server.
- ``sim``: a simulated world to crawl it in: virtual time, an in-memory
  network, seeded schedules.
- ``page``: the steps run in that world where the docs show them (the
  Run buttons, in Pyodide) and by ``python -m shared.page`` in a terminal.
- ``cli``: the ``crawl`` command, which picks a stage and runs it.
- ``bench``: the benchmark, which runs every stage and its peers.

Only ``cli`` and ``bench`` import a stage: the rest stands below them all.
"""

from shared.record.report import report, write_jsonl
from shared.record.stats import FetchStatistic, ResponseTooLarge

__all__ = ["FetchStatistic", "ResponseTooLarge", "report", "write_jsonl"]
