"""The browser's own WHATWG URL parser, for Python running in a page (Pyodide).

In the docs' Run buttons the shared package runs in Pyodide, where ada's
C++ (the ``ada_url`` package) cannot be loaded.  The page has the same
standard's parser already: JavaScript's ``URL``, which Pyodide's ``js``
module hands to Python.  These two functions answer as ada's
``normalize_url`` and ``join_url`` do: the serialized URL (``href``), or
ValueError for what the parser rejects.  ``shared.web.urls`` takes them
when ``ada_url`` cannot be imported; the URL tests run on them in the
browser (tests/test_page_browser.py).

One place where a browser strays from the standard is checked here:
Chromium takes ``http://a b/`` and writes its host ``a%20b``, where the
standard (and ada) reject a space, and any ``%``, in the host of an http
URL.  A host that comes back with a ``%`` in it is refused.
"""

from __future__ import annotations

from typing import Any

from js import URL  # type: ignore[import-not-found]  # Only in Pyodide.
from pyodide.ffi import JsException  # type: ignore[import-not-found]

# Schemes whose host is a domain, where the standard forbids '%' (and so a space).
SPECIAL = ("http:", "https:", "ws:", "wss:", "ftp:")


def normalize_url(url: str) -> str:
    """Return the WHATWG serialization of ``url``.  Raises ValueError if it cannot parse."""
    return href(url, None)


def join_url(base: str, url: str) -> str:
    """Return ``url`` resolved against ``base``, serialized.  Raises ValueError if it cannot."""
    return href(url, base)


def href(url: str, base: str | None) -> str:
    """Parse ``url`` (against ``base``) as the standard says; return its serialization."""
    try:
        parsed: Any = URL.new(url) if base is None else URL.new(url, base)
    except JsException:  # A TypeError in the browser: "Invalid URL".
        raise ValueError(f"invalid URL: {url!r}") from None
    if parsed.protocol in SPECIAL and "%" in parsed.hostname:
        raise ValueError(f"invalid host in URL: {url!r}")
    return str(parsed.href)
