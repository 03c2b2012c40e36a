"""Stage 3: the crawler on asyncio and aiohttp."""

from stage3_asyncio.crawler import Crawler, crawl, run

__all__ = ["Crawler", "crawl", "run"]
