"""Fixtures for stage 2's own tests: a fresh event loop per test, and the
library (asyncio or stage 2) a differential test runs on."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from stage2_generators.loop import EventLoop
from stage2_generators.tests.libraries import LIBRARIES


@pytest.fixture
def loop() -> Iterator[EventLoop]:
    """A new event loop, closed after the test."""
    loop = EventLoop()
    yield loop
    loop.close()


@pytest.fixture(params=["asyncio", "stage2"])
def lib(request: pytest.FixtureRequest) -> SimpleNamespace:
    """asyncio, then stage 2: the library a differential test runs on."""
    return LIBRARIES[request.param]


@pytest.fixture
def lib_loop(lib: SimpleNamespace) -> Iterator[Any]:
    """A new event loop of ``lib``, closed after the test."""
    loop = lib.new_event_loop()
    yield loop
    loop.close()
