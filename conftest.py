"""Fixtures shared by the tests of every folder."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from tests.servers import PageServer


@pytest.fixture
def pages() -> Iterator[PageServer]:
    """A running server that a test adds pages to."""
    with PageServer() as server:
        yield server


@pytest.fixture
def sigint() -> Iterator[None]:
    """Let Ctrl-C work in this test, even when pytest was started with SIGINT ignored.

    A shell starts a background job (``cmd &``, or CI with no terminal) with
    SIGINT ignored, and every child inherits that: a crawl the test starts
    would never see the Ctrl-C the test sends.  Python's own handler, set
    here for the test, raises KeyboardInterrupt in this process and leaves
    SIGINT at its default in the children it starts.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
