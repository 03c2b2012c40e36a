"""The starting points that ``crawl-new`` copies into a reader's package.

One module per stage whose shape a reader's crawler can take
(``crawl-new NAME --like callbacks|generators|asyncio``).  Each is a short
``Crawler`` on ``shared.crawl.crawling.CrawlerBase`` whose unwritten methods
raise NotImplementedError naming the section of the tutorial that teaches
them.  They are real modules, so the type checker and the linter read them
as they read the stages.
"""
