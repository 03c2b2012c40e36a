"""Fixtures for stage 2's own tests: a fresh event loop per test, and the
library (asyncio or stage 2) a differential test runs on, and a heap set
aside for the modules whose tests collect garbage before each test."""

from __future__ import annotations

import gc
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


@pytest.fixture(scope="module")
def heap_set_aside() -> Iterator[None]:
    """Set aside what is alive when the module starts, so each test's gc.collect() is quick.

    A module that collects garbage before each test (so that an earlier
    test's leftovers log nothing during this one) pays for a full pass
    over the heap each time; in a worker of the whole suite that is
    everything imported so far, a third of a second a test.  Collected
    once here and frozen (``gc.freeze``), the old objects are skipped by
    the collector until the module's tests end: each test's collection
    still finds everything the module's earlier tests left, since all of
    it was made after the freeze.
    """
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
