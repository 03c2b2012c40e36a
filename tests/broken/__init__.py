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

Some of them hold a race: a check before an ``await`` (or before a
callback) and the update after it, which only some schedules break.
Their ``RACES`` say, per shape, what ``pytest FILE::TestShape -k seed
--seeds 100`` found: the first seed under which a simulated test fails,
and how many of the hundred seeds fail.  A test class of such a shape runs
under that first seed when the command line names none (``seeds``, see
tests/seeds.py), so the grader's one run finds the race too;
tests/test_race.py checks that the seed still fails and replays alike.
"""

from __future__ import annotations

import dataclasses
import types
from typing import Any

# What a race's hint says to read, per shape: where politeness is taught,
# and where the crawl loop is.
READ_POLITENESS = dict.fromkeys(
    ("callbacks", "generators", "asyncio"), "docs/build-your-own.md#politeness-level-5"
)
READ_CRAWLING = {
    "callbacks": "docs/callbacks.md#crawling-the-site",
    "generators": "docs/coroutines.md#the-queue-crawler",
    "asyncio": "docs/asyncio.md#the-step-the-queue-crawler-on-asyncio",
}


@dataclasses.dataclass(frozen=True)
class Race:
    """What a hundred seeds found of one race in one shape (measured, then kept)."""

    test: str  # The simulated test that fails under ``first``.
    first: int  # The first of seeds 0 to 99 under which a simulated test fails.
    failing: int  # How many of seeds 0 to 99 fail a simulated test.

    def hint(self, rule: str, read: str) -> str:
        """Return the grader's line for this race: its test and seed, ``rule`` and ``read``."""
        return f"{self.test} [seed{self.first}]: rule docs/contract.md#{rule}; read {read}"

    @property
    def seeds(self) -> tuple[int, ...]:
        """The seeds a test class of this shape runs under by default: the first that fails."""
        return (self.first,)


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


def start_fetcher(crawler: Any, job: Any) -> None:
    """Start ``job``'s try on a new Fetcher of stage 1, as its ``when_due`` does once due.

    The callbacks races that move the host's count around the turn reuse it,
    so each file shows only the lines its bug changes.
    """
    fetcher = crawler.make_fetcher(job)
    try:
        fetcher.start()
    except Exception as error:
        fetcher.close()
        crawler.free_slot(job.url)
        crawler.end_with_crash(job, error)
        return
    crawler.jobs[fetcher] = job
