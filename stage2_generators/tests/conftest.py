"""Fixtures for stage 2's own tests: a fresh event loop per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from stage2_generators.loop import EventLoop


@pytest.fixture
def loop() -> Iterator[EventLoop]:
    """A new event loop, closed after the test."""
    loop = EventLoop()
    yield loop
    loop.close()
