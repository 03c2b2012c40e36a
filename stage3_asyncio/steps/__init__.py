"""Stage 3 step by step: the shortest honest crawler on asyncio and aiohttp.

1. ``crawl``: stage 2's queue crawler, with asyncio's loop, tasks and
   queue, and aiohttp to speak HTTP.

Run it with ``python -m stage3_asyncio.steps.crawl [URL]`` against the local
test site (``python -m shared.testsite`` serves it on http://127.0.0.1:8000/).
"""
