"""Broken crawlers: each a stage with one realistic bug, to test the grader with.

Each module here is a stage with one bug a reader's crawler could have,
and the acceptance suite pointed at it, as a reader's package points it at
theirs.  Its ``LEVEL`` is the level at which the chapters teach what the bug
breaks, and its ``HINT`` the line the grader must print for it.
``tests/test_grader.py`` runs the grader on each (``pytest
tests/broken/NAME.py --level LEVEL``) and checks that it passes every level
below and fails at that one, with that hint.  No file here is named
``test_*.py``: a plain ``pytest`` run does not collect them.
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
