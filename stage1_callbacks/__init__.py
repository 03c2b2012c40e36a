"""Stage 1: the crawler in callbacks, on a hand-made event loop."""

from stage1_callbacks.crawler import Crawler, crawl, run

__all__ = ["Crawler", "crawl", "run"]
