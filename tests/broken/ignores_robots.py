"""Ignores robots.txt: a crawler taking obey_robots and never reading robots.txt.

The option is taken in ``__init__``, the same in every shape.
"""

from typing import Any

import stage1_callbacks
import stage2_generators
import stage3_asyncio
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 5
RULE = "test_robots_txt_disallowed_urls_are_skipped: rule docs/contract.md#politeness"
HINTS = {
    "callbacks": f"{RULE}; read docs/build-your-own.md#politeness-level-5",
    "generators": f"{RULE}; read docs/build-your-own.md#politeness-level-5",
    "asyncio": f"{RULE}; read docs/build-your-own.md#politeness-level-5",
}


class IgnoresRobotsCallbacks(stage1_callbacks.Crawler):
    def __init__(self, roots: Any, **options: Any) -> None:
        options.pop("obey_robots", None)  # The bug: the option is taken and dropped.
        super().__init__(roots, **options)


class IgnoresRobotsGenerators(stage2_generators.Crawler):
    def __init__(self, roots: Any, **options: Any) -> None:
        options.pop("obey_robots", None)  # The bug: the option is taken and dropped.
        super().__init__(roots, **options)


class IgnoresRobotsAsyncio(stage3_asyncio.Crawler):
    def __init__(self, roots: Any, **options: Any) -> None:
        options.pop("obey_robots", None)  # The bug: the option is taken and dropped.
        super().__init__(roots, **options)


class TestCallbacks(AcceptanceTests):
    stage = broken_stage(stage1_callbacks, IgnoresRobotsCallbacks)
    shape = "callbacks"


class TestGenerators(AcceptanceTests):
    stage = broken_stage(stage2_generators, IgnoresRobotsGenerators)
    shape = "generators"


class TestAsyncio(AcceptanceTests):
    stage = broken_stage(stage3_asyncio, IgnoresRobotsAsyncio)
    shape = "asyncio"
