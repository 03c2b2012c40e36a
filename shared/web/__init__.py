"""The web as any client meets it, with no crawl in mind.

URLs in their one normal form and the crawl's URL policy (``urls``),
HTTP/1.1 requests and the framing and decoding of responses (``http``),
the links of a page (``links``) in its encoding (``encoding``), sitemaps
(``sitemaps``), when to try again (``retry``), conditional requests for a
second visit (``recrawl``) and name lookups tests can fake (``resolver``).
Nothing here imports another layer of ``shared``.
"""
