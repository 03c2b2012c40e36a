"""The local test site every crawl in the tutorial visits.

``site`` is the site itself, with no I/O: its pages, redirects, errors,
robots.txt and sitemaps, and what a full crawl must record.  ``server``
serves it with aiohttp.web (stage 2's server, in ``stage2_generators``,
serves the same ``Site``); ``python -m shared.testsite`` runs it.
"""
