"""An mkdocs hook that keeps each page from asking for files that do not exist.

Material writes a ``<link rel="alternate" hreflang="...">`` into the head
of every page for each language, and its script then fetches
``sitemap.xml`` beside each of those links, expecting them to be the roots
of other editions of the site.  The i18n plugin points them at the same
page in the other language (``../zh/asyncio/``), where no sitemap is: every
page made two requests that ended in 404 and two errors in the browser's
console (tests/test_site_browser.py looks for them).  This hook takes those
head links out of the built pages.  The language switcher in the header,
which a reader uses, is a menu of its own and keeps working.
"""

from __future__ import annotations

import re
from typing import Any

# Only the head's language links carry hreflang; the switcher's are <a> tags.
HEAD_LANGUAGE_LINK = re.compile(r'[ \t]*<link rel="alternate" href="[^"]*" hreflang="[^"]*">\n?')


def on_post_page(output: str, page: Any, config: Any) -> str:
    """Return the page's HTML without the head's per-language links."""
    return HEAD_LANGUAGE_LINK.sub("", output)
