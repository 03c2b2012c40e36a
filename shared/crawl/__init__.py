"""The crawl's policy and bookkeeping, which every stage's ``Crawler`` calls.

The options a crawl takes (``options``), politeness and robots.txt
(``polite``), and ``crawling``: what to do with each response (record it,
follow its links, retry it, redirect) whatever loop waited for it; and
``keepalive``, stage 3's aiohttp connector, which makes kept-alive
connections behave like the fresh ones of stages 1 and 2.  The stages
keep only the waiting, which is their lesson.  It stands on
``shared.web`` and ``shared.record``.
"""
