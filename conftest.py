"""Fixtures shared by the tests of every folder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.servers import PageServer


@pytest.fixture
def pages() -> Iterator[PageServer]:
    """A running server that a test adds pages to."""
    with PageServer() as server:
        yield server
