"""Grading a crawler level by level: the levels, and the pytest plugin that runs them.

Every acceptance test carries a ``level`` marker: the level at which the
chapters teach what it checks, the rule of docs/contract.md it holds the
crawler to, and the chapter section that teaches it.  The levels follow the
chapters, so a crawler written chapter by chapter passes them in order:

1. one page; 2. links and no repeats; 3. many fetches at once; 4. errors,
redirects and limits; 5. politeness; 6. hostile servers; 7. coming back.

The plugin (the root conftest.py registers it) adds ``--level N``, which
runs the acceptance tests of levels 1 to N only.  A crawler of a reader's
own, any package but the three stages, is graded: its acceptance tests run
in level order, the first level with a failure is the last one run, and the
summary says how far the crawler got, with one line per failed test that
names the rule and the section to read (``-v`` brings the tracebacks back).
The three stages' own runs are left as they were.
"""

from __future__ import annotations

import dataclasses
import shutil
import textwrap
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
OUR_STAGES = ("stage1_callbacks", "stage2_generators", "stage3_asyncio")


@dataclasses.dataclass(frozen=True)
class Level:
    """One level: what a crawler can do once it passes it, and where that is taught."""

    number: int
    title: str
    chapter: str  # The docs page and section that teach it: "page.md#anchor".


LEVELS = (
    Level(1, "one page", "threads.md#a-blocking-fetch"),
    Level(2, "links and no repeats", "callbacks.md#crawling-the-site"),
    Level(3, "many fetches at once", "coroutines.md#a-queue-and-workers"),
    Level(4, "errors, redirects and limits", "asyncio.md#fetching-with-retries"),
    Level(5, "politeness", "coroutines.md#politeness-a-semaphore-and-a-sleep"),
    Level(6, "hostile servers", "side-by-side.md#when-something-breaks"),
    Level(7, "coming back", "reference.md#coming-back"),
)
TOP = len(LEVELS)


def level(number: int, rule: str, chapter: str | None = None) -> pytest.MarkDecorator:
    """Mark a test with its level, its contract section and the chapter that teaches it.

    ``rule`` is a section of the contract (``"links"`` for
    docs/contract.md#links); ``chapter`` defaults to the level's own.
    """
    return pytest.mark.level(number, rule=rule, chapter=chapter or LEVELS[number - 1].chapter)


@dataclasses.dataclass
class Failure:
    """A failed test of a graded crawler (all its failed cases), and what to read about it."""

    name: str
    level: int
    rule: str
    chapter: str
    message: str  # The first case's error, in one line.
    cases: set[str] = dataclasses.field(default_factory=set)  # The ids of its failed cases.

    def hint(self) -> str:
        """Return the line that names the rule broken and the section that teaches it."""
        cases = f" ({len(self.cases)} cases)" if len(self.cases) > 1 else ""
        return f"{self.name}{cases}: rule docs/contract.md#{self.rule}; read docs/{self.chapter}"


@dataclasses.dataclass
class Grade:
    """What one graded crawler (one test file) did, level by level."""

    label: str
    ran: set[int] = dataclasses.field(default_factory=set)
    failures: dict[str, Failure] = dataclasses.field(default_factory=dict)

    @property
    def failed_at(self) -> int | None:
        """Return the lowest level with a failure, or None."""
        return min((failure.level for failure in self.failures.values()), default=None)

    def failed(self, item: pytest.Item, number: int, report: pytest.TestReport) -> None:
        """Note a failed test; the cases of one parametrized test share a line."""
        name = getattr(item, "originalname", item.name)
        if name not in self.failures:
            mark = level_of(item)
            assert mark is not None
            rule, chapter = mark.kwargs["rule"], mark.kwargs["chapter"]
            self.failures[name] = Failure(name, number, rule, chapter, first_line(report))
        self.failures[name].cases.add(item.nodeid)


def level_of(item: pytest.Item) -> pytest.Mark | None:
    """Return an item's level marker, or None."""
    return item.get_closest_marker("level")


def is_graded(item: pytest.Item) -> bool:
    """Tell whether an item is an acceptance test of a crawler that is not one of ours."""
    if level_of(item) is None:
        return False
    try:
        top = item.path.resolve().relative_to(ROOT).parts[0]
    except ValueError:
        return True  # Outside this repository: a reader's package.
    return top not in OUR_STAGES


def first_line(report: pytest.TestReport) -> str:
    """Return the first line of a failed test's error, shortened."""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    line = text.strip().splitlines()[0] if text.strip() else "failed"
    return line if len(line) <= 110 else line[:107] + "..."


class Grader:
    """The plugin's state: the grades of the crawlers in this run."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.top: int = config.getoption("level") or TOP
        self.grades: dict[str, Grade] = {}

    def grade_of(self, item: pytest.Item) -> Grade:
        """Return the grade of the test file ``item`` belongs to."""
        path = item.path.resolve()
        if path.name == "test_acceptance.py" and path.parent.name == "tests":
            label = path.parent.parent.name  # A package's acceptance tests: the package.
        else:
            label = path.relative_to(ROOT).as_posix() if ROOT in path.parents else str(path)
        return self.grades.setdefault(label, Grade(label))

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        """Leave out the levels over --level; put a graded crawler's tests in level order."""
        if config.getoption("level"):
            kept = [item for item in items if self.number(item) <= self.top]
            config.hook.pytest_deselected(items=[item for item in items if item not in kept])
            items[:] = kept
        slots = [index for index, item in enumerate(items) if is_graded(item)]
        graded = sorted((items[index] for index in slots), key=self.number)  # Stable.
        for index, item in zip(slots, graded, strict=True):
            items[index] = item
            self.grade_of(item)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Let the hints stand in for the tracebacks and the short summary (not with -v).

        Set only now, once every report is made: a report made with
        ``--tb=no`` would not keep the assertion's message for the hint.
        """
        if not self.grades or self.config.get_verbosity() > 0:
            return
        if self.config.option.tbstyle == "auto":
            self.config.option.tbstyle = "no"
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.reportchars = ""

    @staticmethod
    def number(item: pytest.Item) -> int:
        """Return an item's level (0 for a test without one)."""
        mark = level_of(item)
        return int(mark.args[0]) if mark is not None else 0

    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """Skip a graded test whose level is past the first level that failed."""
        if not is_graded(item):
            return
        failed_at = self.grade_of(item).failed_at
        if failed_at is not None and self.number(item) > failed_at:
            pytest.skip(f"level {failed_at} failed first")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """Note each graded test that ran, and each that failed, with its hint."""
        report = yield
        mark = level_of(item)
        if mark is None or not is_graded(item) or report.skipped:
            return report
        grade, number = self.grade_of(item), self.number(item)
        grade.ran.add(number)
        if report.failed:
            grade.failed(item, number, report)
        return report

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Say how far each graded crawler got, and what to read for each failure."""
        for grade in self.grades.values():
            terminalreporter.section(f"grade: {grade.label}", sep="=")
            for line in self.summary(grade):
                terminalreporter.write_line(line)

    def summary(self, grade: Grade) -> list[str]:
        """Return the lines of one crawler's grade."""
        failed_at = grade.failed_at
        if failed_at is None:
            passed = max(grade.ran, default=0)
            return [f"level {self.top} of {TOP}: passed {passed}"]
        lines = [f"level {self.top} of {TOP}: passed {failed_at - 1}, failed at {failed_at}"]
        lines.append(f"level {failed_at} is {LEVELS[failed_at - 1].title}; what failed:")
        width = shutil.get_terminal_size().columns  # Lines wrap there, not mid-word.
        for failure in grade.failures.values():
            lines += textwrap.wrap(
                failure.hint(),
                width,
                initial_indent="  ",
                subsequent_indent="    ",
                break_long_words=False,  # An anchor stays whole.
                break_on_hyphens=False,
            )
            message = textwrap.shorten(failure.message, max(width - 6, 40), placeholder="...")
            lines.append("      " + message)
        if self.config.get_verbosity() <= 0:
            lines.append("(pytest -v shows each failure's traceback)")
        return lines


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("grading", "grading a crawler by levels (tests/grading.py)")
    group.addoption(
        "--level",
        type=int,
        choices=range(1, TOP + 1),
        metavar="N",
        help=f"run the acceptance tests of levels 1 to N (1-{TOP}) only",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "level(n, rule, chapter): the level of an acceptance test (tests/grading.py)",
    )
    config.pluginmanager.register(Grader(config), "grader")
