"""The browser's own WHATWG URL parser, for Python running in a page (Pyodide).

In the docs' Run buttons the shared package runs in Pyodide, where ada's
C++ (the ``ada_url`` package) cannot be loaded.  The page has the same
standard's parser already: JavaScript's ``URL``, which Pyodide's ``js``
module hands to Python.  These two functions answer as ada's
``normalize_url`` and ``join_url`` do: the serialized URL (``href``), or
ValueError for what the parser rejects.  ``shared.web.urls`` takes them
when ``ada_url`` cannot be imported; the URL tests run on them in the
browser (tests/test_page_browser.py).
"""

from __future__ import annotations

from js import URL  # type: ignore[import-not-found]  # Only in Pyodide.
from pyodide.ffi import JsException  # type: ignore[import-not-found]


def normalize_url(url: str) -> str:
    """Return the WHATWG serialization of ``url``.  Raises ValueError if it cannot parse."""
    try:
        return str(URL.new(url).href)
    except JsException:  # A TypeError in the browser: "Invalid URL".
        raise ValueError(f"invalid URL: {url!r}") from None


def join_url(base: str, url: str) -> str:
    """Return ``url`` resolved against ``base``, serialized.  Raises ValueError if it cannot."""
    try:
        return str(URL.new(url, base).href)
    except JsException:
        raise ValueError(f"invalid URL: {url!r} against {base!r}") from None
