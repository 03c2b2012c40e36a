"""Broken crawlers: each a stage with one realistic bug, to test the grader with.

Each module here is one bug a reader's crawler could have, written in
every shape where it can be written: a test class per shape
(``TestCallbacks``, ``TestGenerators``, ``TestAsyncio``), each pointing the
acceptance suite at a stage with the bug, as a reader's package points it
at theirs.  ``LEVEL`` is the level at which the chapters teach what the
bug breaks, and ``HINTS`` the line the grader must print for it, per
shape: the section named is the one that teaches the thing in that
shape.  ``ONE_FAILURE = True`` says the bug must fail that one test only.
``tests/test_grader.py`` grades them all in one run and checks that each
fails at its level, with its hint.  No file here is named ``test_*.py``:
a plain ``pytest`` run does not collect them.
"""

from __future__ import annotations

import types
from typing import Any


def broken_stage(stage: types.ModuleType, crawler: type) -> types.ModuleType:
    """Return a stand-in for ``stage`` whose Crawler is ``crawler``.

    It keeps the stage's name, so its logger is still the package's.
    """
    module = types.ModuleType(stage.__name__, f"{stage.__name__} with {crawler.__name__}")

    def crawl(roots: Any, **options: Any) -> Any:
        return stage.run(crawler(roots, **options))

    module.Crawler = crawler  # type: ignore[attr-defined]
    module.run = stage.run  # type: ignore[attr-defined]
    module.crawl = crawl  # type: ignore[attr-defined]
    return module
