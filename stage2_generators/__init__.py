"""Stage 2: the crawler as generator coroutines on a small asyncio of our own."""

from stage2_generators.crawler import Crawler, crawl, run

__all__ = ["Crawler", "crawl", "run"]
