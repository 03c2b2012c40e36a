"""An mkdocs hook that loads Mermaid only on the pages that draw a diagram.

The site ships its own copy of Mermaid (``extra_javascript`` in
mkdocs.yml), so that its diagrams are drawn offline.  mkdocs puts every
extra script on every page, and this one is about 3.5 MB, which a browser
parses and runs before the page is ready.  Material draws a page's
diagrams with it (each ``<pre class="mermaid">``); a page without one has
no use for it.  This hook takes the script out of those pages, and out
of the page for a missing address (404.html), which has none.
"""

from __future__ import annotations

import re
from typing import Any

# The tag mkdocs writes, with a path relative to the page (or from the root, on 404.html).
MERMAID_SCRIPT = re.compile(r'[ \t]*<script src="[./]*javascripts/mermaid\.min\.js"></script>\n?')
DIAGRAM = '<pre class="mermaid">'


def on_post_page(output: str, page: Any, config: Any) -> str:
    """Return the page's HTML, without the Mermaid script when it draws no diagram."""
    if DIAGRAM in output:
        return output
    return MERMAID_SCRIPT.sub("", output)


def on_post_template(output_content: str, template_name: str, config: Any) -> str:
    """Return a template that is not a page (Material's 404.html) without the Mermaid script."""
    return on_post_page(output_content, None, config)
