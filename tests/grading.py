"""Grading a crawler level by level: the levels, and the pytest plugin that runs them.

Every acceptance test carries a ``level`` marker: the level at which the
chapters teach what it checks, the rule of docs/contract.md it holds the
crawler to, and the topic it is about.  The levels follow the chapters, so
a crawler written chapter by chapter passes them in order:

1. one page; 2. links and no repeats; 3. many fetches at once; 4. errors,
redirects and limits; 5. politeness; 6. hostile servers; 7. coming back.

A topic is taught in a different place for each shape of crawler:
``TAUGHT`` maps it to a section per shape (callbacks, generators, asyncio),
and a failure's hint names the section for the shape of the package, the
test class's ``shape`` (``crawl-new`` writes it there, outside
``crawler.py``).

The plugin (the root conftest.py registers it) adds ``--level N``, which
runs the acceptance tests of levels 1 to N only.  A crawler of a reader's
own, any package but the three stages, is graded: its acceptance tests run
in level order, the first level with a failure is the last one run, and the
summary says how far the crawler got, with one line per failed test that
names the rule and the section to read (``-v`` brings the tracebacks back).
Under pytest-xdist a package's tests run on one worker, in order, and the
grade is written from the reports the workers send.  A run that left some
of a crawler's tests out (``-k``, ``-m``, or tests named by id, as a
replay does) says which levels ran instead of how far the crawler got.
The three stages' own runs are left as they were.
"""

from __future__ import annotations

import dataclasses
import shutil
import textwrap
from collections.abc import Generator, Iterable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
OUR_STAGES = ("stage1_callbacks", "stage2_generators", "stage3_asyncio")
SHAPES = ("callbacks", "generators", "asyncio")  # The shapes crawl-new can start from.

# Where each topic is taught, in each shape: "page.md#anchor" for callbacks,
# generators and asyncio.  tests/test_grader.py checks every one against
# the headings of the built site.
TAUGHT: dict[str, tuple[str, str, str]] = {
    # What a skeleton's reader needs for one page: the pieces each stage
    # fetches with (stage 1's loop, build_request, ResponseParser...).
    "one-page": ("build-your-own.md#one-page-level-1",) * 3,
    # Running in the simulated world: what run() must do with crawler.world.
    "simulation": ("build-your-own.md#a-crawl-in-the-simulated-world",) * 3,
    "https": ("build-your-own.md#https",) * 3,
    "one-request": (
        "real-callbacks.md#the-fetcher-one-request-as-a-chain-of-callbacks",
        "side-by-side.md#one-request",
        "real-asyncio.md#one-request",
    ),
    "crawling": (
        "callbacks.md#crawling-the-site",
        "coroutines.md#the-queue-crawler",
        "asyncio.md#the-step-the-queue-crawler-on-asyncio",
    ),
    "many-at-once": (
        "side-by-side.md#the-crawl-loop",
        "coroutines.md#a-queue-and-workers",
        "real-asyncio.md#the-queue-and-the-workers",
    ),
    "retries": (
        "real-callbacks.md#the-crawler-a-retry-loop-that-cannot-be-a-loop",
        "real-coroutines.md#the-crawler",
        "real-asyncio.md#fetching-with-retries",
    ),
    # Counting tries: aiohttp's quiet second try on a kept connection is
    # turned off where stage 3 opens its session.
    "counted-tries": (
        "real-callbacks.md#the-crawler-a-retry-loop-that-cannot-be-a-loop",
        "real-coroutines.md#the-crawler",
        "real-asyncio.md#the-queue-and-the-workers",
    ),
    "redirects": (
        "real-callbacks.md#the-crawler-a-retry-loop-that-cannot-be-a-loop",
        "side-by-side.md#one-url-with-retries",
        "real-asyncio.md#redirects",
    ),
    "timeouts": (
        "real-callbacks.md#the-fetcher-one-request-as-a-chain-of-callbacks",
        "real-coroutines.md#timeouts-wait_for",
        "await.md#timeouts",
    ),
    "sockets": (
        "real-callbacks.md#the-fetcher-one-request-as-a-chain-of-callbacks",
        "real-coroutines.md#cancellation",
        "real-asyncio.md#one-request",
    ),
    "compression": (
        "real-callbacks.md#the-fetcher-one-request-as-a-chain-of-callbacks",
        "side-by-side.md#one-request",
        "real-asyncio.md#one-request",
    ),
    "worker-bugs": (
        "real-callbacks.md#the-crawler-a-retry-loop-that-cannot-be-a-loop",
        "coroutines.md#a-worker-that-survives-a-bad-item",
        "real-asyncio.md#the-queue-and-the-workers",
    ),
    "task-groups": (
        "side-by-side.md#when-something-breaks",
        "await.md#task-groups",
        "real-asyncio.md#what-changed-from-the-500-lines-version",
    ),
    "report": (
        "real-callbacks.md#what-every-stage-shares",
        "real-coroutines.md#limits-the-report-and-forgotten-tasks",
        "real-asyncio.md#running-it-and-the-report",
    ),
    # What CrawlerBase gives a polite crawler (robots_needed, admit,
    # record_skip, turn), and where each shape's chapter waits.
    "politeness": ("build-your-own.md#politeness-level-5",) * 3,
    "limits": ("build-your-own.md#politeness-level-5",) * 3,
    "hostile": ("side-by-side.md#when-a-server-lies",) * 3,
    "coming-back": ("reference.md#coming-back",) * 3,
    "sitemaps": ("reference.md#sitemaps",) * 3,
    "recrawling": ("reference.md#recrawling",) * 3,
}


def taught(topic: str, shape: str | None) -> str:
    """Return the section that teaches ``topic`` in ``shape`` (asyncio's when unknown)."""
    index = SHAPES.index(shape) if shape in SHAPES else SHAPES.index("asyncio")
    return TAUGHT[topic][index]


@dataclasses.dataclass(frozen=True)
class Level:
    """One level: what a crawler can do once it passes it, and the topic of its tests."""

    number: int
    title: str
    topic: str  # The topic of its tests, unless a test names its own.


LEVELS = (
    Level(1, "one page", "one-page"),
    Level(2, "links and no repeats", "crawling"),
    Level(3, "many fetches at once", "many-at-once"),
    Level(4, "errors, redirects and limits", "retries"),
    Level(5, "politeness", "politeness"),
    Level(6, "hostile servers", "hostile"),
    Level(7, "coming back", "coming-back"),
)
TOP = len(LEVELS)


def level(number: int, rule: str, topic: str | None = None) -> pytest.MarkDecorator:
    """Mark a test with its level, its contract section and its topic.

    ``rule`` is a section of the contract (``"links"`` for
    docs/contract.md#links); ``topic``, a key of ``TAUGHT``, defaults to
    the level's own.  Raise KeyError for a topic ``TAUGHT`` lacks.
    """
    topic = topic or LEVELS[number - 1].topic
    if topic not in TAUGHT:  # A misspelt topic fails at import, not in a hint.
        raise KeyError(f"no section teaches the topic {topic!r}")
    return pytest.mark.level(number, rule=rule, topic=topic)


@dataclasses.dataclass
class Failure:
    """A failed test of a graded crawler (all its failed cases), and what to read about it."""

    name: str
    level: int
    rule: str
    chapter: str  # The section for the package's shape: "page.md#anchor".
    message: str  # The first case's error, its first line.
    cases: list[str] = dataclasses.field(default_factory=list)  # Its failed cases' ids.

    def hint(self) -> str:
        """Return the line that names the rule broken and the section that teaches it."""
        cases = f" [{', '.join(self.cases)}]" if self.cases else ""
        return f"{self.name}{cases}: rule docs/contract.md#{self.rule}; read docs/{self.chapter}"


@dataclasses.dataclass
class Grade:
    """What one graded crawler (one test file) did, level by level."""

    label: str
    ran: set[int] = dataclasses.field(default_factory=set)
    failures: dict[str, Failure] = dataclasses.field(default_factory=dict)
    deselected: int = 0  # Its tests left out by -k, -m or another deselection.
    package: str = ""  # The package graded, when it is one (not a file of tests/broken).
    # When the command line named some of its tests (a replay's test id):
    # how many it named, else 0.
    chosen: int = 0

    @property
    def failed_at(self) -> int | None:
        """Return the lowest level with a failure, or None."""
        return min((failure.level for failure in self.failures.values()), default=None)

    def note(self, record: dict[str, Any], report: pytest.TestReport) -> None:
        """Note one report of a graded test; the cases of one test share a line."""
        self.deselected = record["deselected"]
        self.package = record.get("package", "")
        self.chosen = record.get("chosen", 0)
        if report.failed or (report.when == "call" and report.passed):
            self.ran.add(record["level"])  # Not for the teardown of a skipped test.
        if not report.failed:
            return
        name = record["name"]
        if name not in self.failures:
            message = record.get("message") or first_line(report)
            self.failures[name] = Failure(
                name, record["level"], record["rule"], record["chapter"], message
            )
        case = record["case"]
        if case and case not in self.failures[name].cases:
            self.failures[name].cases.append(case)


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


def shape_of(item: pytest.Item) -> str | None:
    """Return the shape the test's class names (``shape = "callbacks"``), or None."""
    return getattr(getattr(item, "cls", None), "shape", None)


def package_of(item: pytest.Item) -> str:
    """Return the package whose acceptance tests an item is (``NAME/tests/test_acceptance.py``).

    Return "" for a test of any other file.
    """
    path = item.path.resolve()
    if path.name == "test_acceptance.py" and path.parent.name == "tests":
        return path.parent.parent.name
    return ""


def label_of(item: pytest.Item) -> str:
    """Return the name of the graded crawler an item belongs to.

    A package's acceptance tests (``NAME/tests/test_acceptance.py``) grade
    the package.  Elsewhere each file is a crawler, or each test class of
    it when the class has a name of its own (tests/broken/ has a file per
    bug and a class per shape).
    """
    if package := package_of(item):
        return package
    path = item.path.resolve()
    label = path.relative_to(ROOT).as_posix() if ROOT in path.parents else str(path)
    cls = getattr(item, "cls", None)
    return label if cls is None or cls.__name__ == "TestAcceptance" else f"{label}::{cls.__name__}"


def first_line(report: pytest.TestReport) -> str:
    """Return the first line of a failed test's error, whole."""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    return text.strip().splitlines()[0] if text.strip() else "failed"


def wrapped(text: str, width: int, first: str, rest: str) -> list[str]:
    """Return ``text`` in lines of at most ``width``, never cut, broken only between words."""
    return textwrap.wrap(
        text,
        width,
        initial_indent=first,
        subsequent_indent=rest,
        break_long_words=False,  # An anchor stays whole.
        break_on_hyphens=False,
    )


def own_error(call: pytest.CallInfo[None]) -> str | None:
    """Say in words that a test met a result it could not read, or return None.

    An error of the test's own (an IndexError, a KeyError, a ValueError
    raised by the acceptance suite's code, not by the crawler's) means the
    crawler returned something of another shape than the test expected:
    the message says so, and names the test's line, which shows what it
    expected.
    """
    excinfo = call.excinfo
    if excinfo is None or not isinstance(excinfo.value, LookupError | ValueError):
        return None  # An assertion says what it expected; other errors are the crawler's.
    last = excinfo.traceback[-1]
    path = Path(str(last.path))
    if path.parent != Path(__file__).parent or not path.name.endswith("acceptance.py"):
        return None  # Raised in the crawler, or deeper: its own message says more.
    line = str(last.statement).strip()
    error = excinfo.exconly().strip().splitlines()[0]
    return (
        f"the crawler's result was not of the shape this test reads ({error}),"
        f" at tests/{path.name}:{last.lineno + 1}: {line}"
    )


def levels_text(levels: Iterable[int]) -> str:
    """Return a set of levels as words: "1", "1 and 2", "1, 2 and 4"."""
    names = [str(number) for number in sorted(levels)]
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)


class Grader:
    """The plugin's state: the grades of the crawlers in this run."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.top: int = config.getoption("level") or TOP
        # --seeds N or --seed K (tests/seeds.py): the simulated tests ran under chosen seeds.
        seeded = (config.getoption(name, None) for name in ("seeds", "one_seed"))
        self.seeded = any(value is not None for value in seeded)
        self.grades: dict[str, Grade] = {}
        self.deselected: dict[str, int] = {}  # Per graded crawler, while collecting.
        self.chosen: dict[str, int] = {}  # Per graded crawler whose tests were named one by one.
        self.leaving_out_levels = False  # While --level deselects.

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        """Count the graded tests that -k, -m or a plugin left out."""
        if self.leaving_out_levels:
            return
        for item in items:
            if is_graded(item):
                label = label_of(item)
                self.deselected[label] = self.deselected.get(label, 0) + 1

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        """Leave out the levels over --level; put a graded crawler's tests in level order.

        Last: the tests that ``-k`` and ``-m`` left out are counted by then.
        """
        if config.getoption("level"):
            kept = [item for item in items if self.number(item) <= self.top]
            self.leaving_out_levels = True
            config.hook.pytest_deselected(items=[item for item in items if item not in kept])
            self.leaving_out_levels = False
            items[:] = kept
        slots = [index for index, item in enumerate(items) if is_graded(item)]
        graded = sorted((items[index] for index in slots), key=self.number)  # Stable.
        for index, item in zip(slots, graded, strict=True):
            items[index] = item
        self.chosen = self.named_one_by_one(graded)

    def named_one_by_one(self, graded: list[pytest.Item]) -> dict[str, int]:
        """Return how many tests were collected of each crawler that lacks some of its tests.

        Naming tests by id (``pytest FILE::CLASS::test_x[seed3]``, as a
        replay does) deselects nothing: the rest are simply not collected.
        A crawler lacks a test when a graded test function of its class, at
        a level up to --level, has no item collected.
        """
        by_label: dict[str, list[pytest.Item]] = {}
        for item in graded:
            by_label.setdefault(label_of(item), []).append(item)
        chosen = {}
        for label, items in by_label.items():
            names = {getattr(item, "originalname", item.name) for item in items}
            cls = getattr(items[0], "cls", None)
            wanted = {
                name
                for name in dir(cls)
                if name.startswith("test_") and 0 < self.function_level(cls, name) <= self.top
            }
            if wanted - names:
                chosen[label] = len(items)
        return chosen

    @staticmethod
    def function_level(cls: Any, name: str) -> int:
        """Return the level of the test function ``name`` of ``cls`` (0 for none)."""
        marks = getattr(getattr(cls, name, None), "pytestmark", [])
        return next((int(mark.args[0]) for mark in marks if mark.name == "level"), 0)

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
        grade = self.grades.get(label_of(item))
        failed_at = grade.failed_at if grade is not None else None
        if failed_at is not None and self.number(item) > failed_at:
            pytest.skip(f"level {failed_at} failed first")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """Give each report of a graded test what its grade needs.

        In the report's ``user_properties``, which pytest-xdist carries
        from a worker to the process that prints the summary.
        """
        report = yield
        mark = level_of(item)
        if mark is None or not is_graded(item):
            return report
        callspec = getattr(item, "callspec", None)
        record = {
            "label": label_of(item),
            "name": getattr(item, "originalname", item.name),
            "case": callspec.id if callspec is not None else "",
            "level": self.number(item),
            "rule": mark.kwargs["rule"],
            "chapter": taught(mark.kwargs["topic"], shape_of(item)),
            "deselected": self.deselected.get(label_of(item), 0),
            "chosen": self.chosen.get(label_of(item), 0),
            "package": package_of(item),
            "message": own_error(call) if report.failed else None,
        }
        report.user_properties.append(("grade", record))
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Note each report of a graded test in its crawler's grade."""
        for key, record in report.user_properties:
            if key == "grade" and isinstance(record, dict):
                grade = self.grades.setdefault(record["label"], Grade(record["label"]))
                grade.note(record, report)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Say how far each graded crawler got, and what to read for each failure."""
        for grade in self.grades.values():
            terminalreporter.section(f"grade: {grade.label}", sep="=")
            for line in self.summary(grade):
                terminalreporter.write_line(line)

    def summary(self, grade: Grade) -> list[str]:
        """Return the lines of one crawler's grade, and for a package, how to hunt races.

        The simulated tests ran under one schedule; unless --seeds or --seed
        chose others, the last line gives the command that runs them under many.
        """
        lines = self.outcome(grade)
        if not grade.package or self.seeded:
            return lines
        offer = "the simulated tests ran under one schedule; to hunt races, run them under 100:"
        command = f"pytest {grade.package} --seeds 100"
        width = max(shutil.get_terminal_size().columns, 40)
        if len(offer) + 1 + len(command) <= width:
            return [*lines, f"{offer} {command}"]
        return [*lines, *wrapped(offer, width, "", ""), f"  {command}"]  # The command whole.

    def outcome(self, grade: Grade) -> list[str]:
        """Return the lines that say how far a crawler got, and what to read for each failure."""
        failed_at = grade.failed_at
        width = max(shutil.get_terminal_size().columns, 40)  # Lines wrap there, not mid-word.
        if grade.deselected or grade.chosen:  # Some of its tests did not run: say which levels did.
            plural = "s" if len(grade.ran) > 1 else ""
            ran = f"ran level{plural} {levels_text(grade.ran)}" if grade.ran else "ran no level"
            outcome = f"failed at {failed_at}" if failed_at else "no failure"
            if grade.deselected:
                which = f"{grade.deselected} tests deselected"
            else:
                which = f"{grade.chosen} test{'s' if grade.chosen > 1 else ''} named"
            lines = [f"level {self.top} of {TOP}, {which}: {ran}; {outcome}"]
        elif failed_at is None:
            return [f"level {self.top} of {TOP}: passed {max(grade.ran, default=0)}"]
        else:
            lines = [f"level {self.top} of {TOP}: passed {failed_at - 1}, failed at {failed_at}"]
        if failed_at is None:
            return lines
        lines.append(f"level {failed_at} is {LEVELS[failed_at - 1].title}; what failed:")
        for failure in grade.failures.values():
            lines += wrapped(failure.hint(), width, "  ", "    ")
            lines += wrapped(failure.message, width, "      ", "      ")
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


# What a leaked socket or response warns of when the garbage collector
# finds it, in whichever test is running then.  pyproject.toml makes them
# errors, which would fail that test too; a graded crawler's leaks are
# the socket test's to find (one bug, one failure), so there they are
# only shown.
LEFT_TO_THE_COLLECTOR = ("ResourceWarning", "pytest.PytestUnraisableExceptionWarning")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put each graded crawler's tests in one pytest-xdist group, so one worker runs them.

    And let a leak found by the garbage collector warn instead of failing
    whichever test it happens in (``LEFT_TO_THE_COLLECTOR``).

    First: pytest-xdist reads the groups in a hook of its own.  It needs
    ``--dist loadgroup``, which ``pytest_configure`` puts in place of the
    plain ``load`` that ``-n`` chooses.
    """
    xdist = config.pluginmanager.hasplugin("xdist")  # Its mark is unknown without it.
    for item in items:
        if is_graded(item):
            if xdist:
                item.add_marker(pytest.mark.xdist_group(f"grade-{label_of(item)}"))
            for warning in LEFT_TO_THE_COLLECTOR:
                item.add_marker(pytest.mark.filterwarnings(f"default::{warning}"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "level(n, rule, topic): the level of an acceptance test (tests/grading.py)",
    )
    if getattr(config.option, "dist", "no") == "load":
        # The same as load for a test in no group; a graded crawler's tests
        # share a group, so they run in order on one worker.
        config.option.dist = "loadgroup"
    config.pluginmanager.register(Grader(config), "grader")
