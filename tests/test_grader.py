"""The grader, tested against crawlers that are wrong on purpose.

``tests/broken/`` holds stages with one realistic bug each.  One pytest
run grades them all (each stops at its first failing level, as a reader's
package does); each must pass every level below its bug and fail at the
bug's level with its hint.  A race (``RACES``) runs only the simulated
test that finds it, under the first seed that does (tests/test_race.py
checks the replay).  A skeleton fresh from ``crawl-new`` must fail
level 1 with hints, not tracebacks.  And the data the hints come from is
checked: every acceptance test has a level, and every section a level, a
hint or a skeleton names exists in the docs.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import inspect
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import aiohttp
import pytest
from markdown.extensions.toc import slugify

from shared import FetchStatistic
from shared.cli import new
from shared.sim import World
from tests.acceptance import (
    AcceptanceTests,
    TaskGroupTests,
    keep_offline,
    offline_lookup,
    recorded_twice,
    where,
)
from tests.grading import (
    LEVELS,
    SHAPES,
    TAUGHT,
    TOP,
    Failure,
    Grade,
    Grader,
    levels_text,
    taught,
)
from tests.seeds import seed_of, without_group
from tests.servers import poll
from tests.test_exercises import NO_HYPOTHESIS

ROOT = Path(__file__).resolve().parents[1]
BROKEN = sorted(path.stem for path in (ROOT / "tests" / "broken").glob("[a-z]*.py"))
# Each broken crawler in each shape it is written in: its module has a test class per shape.
SHAPED = [
    (name, shape)
    for name in BROKEN
    for shape in SHAPES
    if hasattr(importlib.import_module(f"tests.broken.{name}"), f"Test{shape.capitalize()}")
]
SECTION = re.compile(r"^=+ grade: (?P<label>\S+) =+$", re.MULTILINE)
DOCS_LINK = re.compile(r"docs/(?P<page>[\w-]+\.md)#(?P<anchor>[\w-]+)")
GRADE_RUN = 900  # Seconds the grading of every broken crawler may take on a busy machine.
WORKERS = "3"  # pytest-xdist workers that grade them: a crawl mostly waits on its servers.


def run_pytest(args: list[str], cwd: Path, pythonpath: list[Path]) -> str:
    """Run pytest in a subprocess and return what it printed.

    Without Hypothesis's plugin, which the acceptance tests do not use: it
    imports all of Hypothesis at the end of a run, a second or more of
    processor time in each.
    """
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, pythonpath)), "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *NO_HYPOTHESIS, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=GRADE_RUN,
    )
    return done.stdout + done.stderr


def sections(output: str) -> dict[str, list[str]]:
    """Return the lines of each grade section of pytest's output, by label."""
    found: dict[str, list[str]] = {}
    matches = list(SECTION.finditer(output))
    assert matches, f"no grade in pytest's output:\n{output}"
    for match, after in zip(matches, [*matches[1:], None], strict=True):
        text = output[match.end() : after.start() if after else len(output)]
        body = text.split("\n=")[0]  # Up to pytest's closing line.
        found[match["label"]] = [line.strip() for line in body.strip().splitlines()]
    return found


def full_ladder(name: str) -> str:
    """Return the shape a broken crawler is graded in from level 1 up: the first of its HINTS.

    None for a race (its ``RACES``): each shape runs the one simulated test
    that finds it (``race_only``), and tests/test_race.py checks the rest.
    """
    broken = importlib.import_module(f"tests.broken.{name}")
    return "" if hasattr(broken, "RACES") else next(iter(broken.HINTS))


def race_only(name: str, shape: str) -> list[str]:
    """Return the --deselect options that leave a race's shape only the test that finds it."""
    race = importlib.import_module(f"tests.broken.{name}").RACES[shape]
    prefix = f"tests/broken/{name}.py::Test{shape.capitalize()}::"
    return [
        option
        for test, _ in acceptance_tests()
        if not race.test.startswith(test)
        for option in ("--deselect", prefix + test)
    ]


def lower_levels(name: str, shape: str) -> list[str]:
    """Return the --deselect options that leave out the levels below a broken crawler's bug.

    For each shape but its ``full_ladder``: those levels pass in that shape
    too (each stage's own run checks that), and grading them again would
    cost a minute.  ``--deselect`` takes a prefix of test ids, so a name
    that begins another test's name at the bug's level or above is kept.
    """
    level = importlib.import_module(f"tests.broken.{name}").LEVEL
    tests = [(test, levels_of(function)[0].args[0]) for test, function in acceptance_tests()]
    kept = [test for test, number in tests if number >= level]
    below = [test for test, number in tests if number < level]
    prefix = f"tests/broken/{name}.py::Test{shape.capitalize()}::"
    return [
        option
        for test in below
        if not any(other.startswith(test) for other in kept)
        for option in ("--deselect", prefix + test)
    ]


# Session, not module: xdist may give the one worker of the group other
# tests in between, and a module fixture would then run again.
@pytest.fixture(scope="session")
def graded() -> dict[str, list[str]]:
    """Grade every broken crawler in every shape, in one pytest run on a few workers.

    Under pytest-xdist, as a reader may run it: each crawler's tests run
    in order on one worker, which stops at its first failing level, and
    the grade is written by the process that prints.  Slow tests are left
    out (-m "not slow"), and so are the levels below the bug in all shapes
    but one (``lower_levels``); a race runs its one test (``race_only``).
    """
    files = [f"tests/broken/{name}.py" for name in BROKEN]
    shorter = [
        option
        for name, shape in SHAPED
        if shape != full_ladder(name)
        for option in (
            race_only(name, shape)
            if hasattr(importlib.import_module(f"tests.broken.{name}"), "RACES")
            else lower_levels(name, shape)
        )
    ]
    options = ["-m", "not slow", "-q", "-n", WORKERS, *shorter]
    return sections(run_pytest([*files, *options], ROOT, [ROOT]))


@pytest.mark.slow
@pytest.mark.xdist_group("grader")  # The fixture runs once, on one worker.
@pytest.mark.timeout(GRADE_RUN + 60)
@pytest.mark.parametrize(("name", "shape"), SHAPED)
def test_a_broken_crawler_fails_at_its_level_with_its_hint(
    graded: dict[str, list[str]], name: str, shape: str
) -> None:
    broken = importlib.import_module(f"tests.broken.{name}")
    lines = graded[f"tests/broken/{name}.py::Test{shape.capitalize()}"]
    shown = "\n".join(lines)
    level = broken.LEVEL
    if shape == full_ladder(name):  # Every level up to the bug's ran.
        ran = ("levels " if level > 1 else "level ") + levels_text(range(1, level + 1))
        assert lines[0].endswith(f"deselected: ran {ran}; failed at {level}"), shown
    assert lines[0].endswith(f"; failed at {level}"), shown
    text = " ".join(lines)  # A hint may be wrapped at the terminal's width.
    assert broken.HINTS[shape] in text, shown
    if getattr(broken, "ONE_FAILURE", False):  # One bug, one failed test.
        assert sum(line.startswith("test_") for line in lines) == 1, shown


def test_there_are_broken_crawlers_for_several_levels_and_shapes() -> None:
    levels = {importlib.import_module(f"tests.broken.{name}").LEVEL for name in BROKEN}
    assert len(BROKEN) >= 15 and levels >= {2, 3, 4, 5}
    for name in BROKEN:  # A hint for each shape it is written in, and no other.
        hints = importlib.import_module(f"tests.broken.{name}").HINTS
        assert set(hints) == {shape for named, shape in SHAPED if named == name}, name
    assert {shape for _, shape in SHAPED} == set(SHAPES)


@pytest.mark.slow
def test_a_fresh_skeleton_fails_level_1_with_hints(tmp_path: Path) -> None:
    for shape in new.SHAPES:  # One package of each shape, graded in one run.
        made = new.make_package(f"mine_{shape}", shape, tmp_path)
        assert {path.relative_to(tmp_path).as_posix() for path in made} == {
            f"mine_{shape}/{file}"
            for file in [
                "__init__.py",
                "crawler.py",
                "tests/__init__.py",
                "tests/test_acceptance.py",
            ]
        }
    # Outside the repository, the root conftest.py (its fixtures and the
    # grader) comes in as a plugin; in it, pytest finds it on its own.
    packages = [f"mine_{shape}" for shape in new.SHAPES]
    output = run_pytest(["-p", "conftest", *packages, "--level", "1"], tmp_path, [ROOT, tmp_path])
    assert "Traceback" not in output
    hint = re.compile(r"^test_\w+.*: rule docs/contract\.md#[\w-]+; read docs/[\w-]+\.md#[\w-]+$")
    for package in packages:
        lines = sections(output)[package]
        assert lines[0] == f"level 1 of {TOP}: passed 0, failed at 1", output
        assert any(hint.match(line) for line in lines)
        assert any(line.startswith("NotImplementedError: ") for line in lines)
        assert lines[-1].endswith(f"pytest {package} --seeds 100"), output


@pytest.mark.parametrize("shape", new.SHAPES)
def test_a_skeleton_from_crawl_new_runs_in_the_simulated_world(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    """The skeleton's run(), as crawl-new writes it, puts the crawl on the world's clock.

    Its crawl is replaced by one that waits 5 s: in the world that is
    5 s of the world's time and none of the machine's; a run() that
    ignored the world would leave the world's clock at 0.
    """
    name = f"mine_{shape}_world"
    new.make_package(name, shape, tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(f"{name}.crawler")
    waits = {
        "callbacks": waits_on_stage_1,
        "generators": waits_on_stage_2,
        "asyncio": waits_on_asyncio,
    }
    crawler = waits[shape](module.Crawler)(["http://127.0.0.1:8000/"])
    world = World(0)
    crawler.simulate(world)
    assert module.run(crawler) is crawler
    assert world.time() == 5.0, (
        f"the {shape} skeleton's run(): expected 5 s on the world's clock, got {world.time()}"
    )


def waits_on_stage_1(base: type) -> type:
    """Return the callbacks skeleton's Crawler with a crawl that stops the loop after 5 s."""

    class Waits(base):  # type: ignore[misc, valid-type]
        def crawl(self) -> None:
            self.loop.call_later(5.0, self.loop.stop)

    return Waits


def waits_on_stage_2(base: type) -> type:
    """Return the generators skeleton's Crawler with a crawl that sleeps 5 s."""
    from stage2_generators.tasks import sleep

    class Waits(base):  # type: ignore[misc, valid-type]
        def crawl(self) -> Any:
            yield from sleep(5.0)

    return Waits


def waits_on_asyncio(base: type) -> type:
    """Return the asyncio skeleton's Crawler with a crawl that sleeps 5 s."""

    class Waits(base):  # type: ignore[misc, valid-type]
        async def crawl(self) -> None:
            await asyncio.sleep(5.0)

    return Waits


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("1st", "not a valid Python package name"),
        ("class", "is a Python keyword"),
        ("stage2_generators", "would shadow this repository's own package"),
        ("tests", "would shadow this repository's own package"),
        ("json", "would shadow the module json"),
        ("aiohttp", "would shadow the module aiohttp"),
        ("taken", "exists already"),
    ],
)
def test_crawl_new_refuses_a_bad_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    name: str, why: str,
) -> None:  # fmt: skip
    (tmp_path / "taken").mkdir()
    monkeypatch.chdir(tmp_path)
    assert new.main([name]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and why in err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["taken"]


def test_crawl_new_refuses_a_folder_without_the_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "docs").mkdir()  # A folder of the repository that is not its root, say.
    monkeypatch.chdir(tmp_path / "docs")
    assert new.main(["mine"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "has no tests/acceptance.py" in err
    assert list((tmp_path / "docs").iterdir()) == []


def test_crawl_new_makes_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "acceptance.py").touch()  # The root of a checkout, as far as it asks.
    monkeypatch.chdir(tmp_path)
    assert new.main(["mine", "--like", "callbacks"]) == 0
    out = capsys.readouterr().out
    assert "made mine/crawler.py" in out and "next: pytest mine --level 1" in out
    crawler = (tmp_path / "mine" / "crawler.py").read_text()
    assert crawler == (ROOT / "shared" / "cli" / "skeletons" / "callbacks.py").read_text()
    stage_tests = (ROOT / "stage1_callbacks" / "tests" / "test_acceptance.py").read_text()
    mine = (tmp_path / "mine" / "tests" / "test_acceptance.py").read_text()
    assert mine.replace("mine", "stage1_callbacks") == stage_tests.replace(
        "Stage 1", "stage1_callbacks"
    )
    assert 'shape = "callbacks"' in mine  # The hints follow the shape.


# --- The data of the hints -----------------------------------------------------


def acceptance_tests() -> list[tuple[str, Callable[..., Any]]]:
    """Return every test function of the acceptance suite, by name."""
    found = {}
    for cls in (AcceptanceTests, TaskGroupTests):
        for name, function in inspect.getmembers(cls, inspect.isfunction):
            if name.startswith("test_"):
                found[name] = function
    return sorted(found.items())


def levels_of(function: object) -> list[pytest.Mark]:
    """Return the level marks of a test function."""
    marks = getattr(function, "pytestmark", [])
    return [mark for mark in marks if mark.name == "level"]


def test_every_acceptance_test_has_one_level() -> None:
    unmarked = [name for name, function in acceptance_tests() if len(levels_of(function)) != 1]
    assert unmarked == []
    used = {levels_of(function)[0].args[0] for _, function in acceptance_tests()}
    assert used == {level.number for level in LEVELS}


@pytest.mark.parametrize(
    "name", ["example.com", b"www.example.org", "EXAMPLE.NET.", "public.example", "x.invalid"]
)
def test_a_crawl_under_test_never_looks_up_a_name_kept_for_examples(name: str | bytes) -> None:
    asked: list[Any] = []
    lookup = offline_lookup(lambda *args, **kwargs: asked.append(args))
    with pytest.raises(socket.gaierror):
        lookup(name, 80)
    lookup("127.0.0.1", 80)
    lookup("example.community", 80)  # Not a name kept for examples.
    assert asked == [("127.0.0.1", 80), ("example.community", 80)], (
        f"only the names not kept for examples reach the real lookup, got {asked}"
    )


# The options the chapters introduce at a level: no test below it may pass one.
INTRODUCED = {
    5: ["obey_robots", "delay=", "max_per_host", "max_pages", "max_depth", "user_agent"],
    7: ["sitemaps=", "since=", "max_retry_after"],
}


def test_a_level_passes_only_options_its_chapters_introduced() -> None:
    early = [
        f"{name} (level {levels_of(function)[0].args[0]}): {option}"
        for name, function in acceptance_tests()
        for introduced, options in INTRODUCED.items()
        for option in options
        if levels_of(function)[0].args[0] < introduced and option in inspect.getsource(function)
    ]
    assert early == []


def anchors(page: Path) -> set[str]:
    """Return the anchors of a docs page's headings, as mkdocs makes them."""
    found = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"^#{1,6} (?P<text>.+?)(?: \{ #(?P<id>[\w-]+) \})?$", line)
        if heading:
            text = heading["text"].replace("`", "")
            found.add(heading["id"] or slugify(text, "-"))
    return found


def sections_named() -> set[tuple[str, str]]:
    """Return every docs section a hint, a broken crawler or a skeleton names."""
    named = {tuple(chapter.split("#")) for chapters in TAUGHT.values() for chapter in chapters}
    for _, function in acceptance_tests():
        (mark,) = levels_of(function)
        named.add(("contract.md", mark.kwargs["rule"]))
    texts = [path.read_text() for path in (ROOT / "shared" / "cli" / "skeletons").glob("*.py")]
    texts += [path.read_text() for path in (ROOT / "tests" / "broken").glob("*.py")]
    # What the acceptance suite's messages name: the grader prints them under the hints.
    texts += [path.read_text() for path in (ROOT / "tests").glob("*acceptance.py")]
    for text in texts:
        named |= {(match["page"], match["anchor"]) for match in DOCS_LINK.finditer(text)}
    return {(str(page), str(anchor)) for page, anchor in named}


def test_every_section_a_hint_names_exists() -> None:
    missing = [
        f"{page}#{anchor}"
        for page, anchor in sorted(sections_named())
        if anchor not in anchors(ROOT / "docs" / page)
    ]
    assert missing == []
    assert ("real-asyncio.md", "the-queue-and-the-workers") in sections_named()  # Reads the data.


def test_every_test_has_a_section_for_each_shape() -> None:
    topics = {levels_of(function)[0].kwargs["topic"] for _, function in acceptance_tests()}
    assert topics <= set(TAUGHT)
    assert all(len(chapters) == len(SHAPES) for chapters in TAUGHT.values())
    # A shape's hints stay in its own chapters where it has them.
    own = {"callbacks": "callbacks.md", "generators": "coroutines.md", "asyncio": "asyncio.md"}
    for shape, page in own.items():
        pages = {taught(topic, shape).split("#")[0] for topic in topics}
        assert page in pages and not pages & (set(own.values()) - {page}), (shape, pages)


HEADING_ID = re.compile(r'<h[1-6][^>]* id="(?P<id>[^"]+)"')


@pytest.mark.slow
@pytest.mark.parametrize("language", ["", "zh"])
def test_every_hint_points_to_a_heading_of_the_built_site(built_site: Path, language: str) -> None:
    """Each section the grader can print is a heading in the site as built, in both languages.

    The hint of each (test, shape) pair, the contract's rule of each test,
    and every section a skeleton, a broken crawler or a message of the
    acceptance suite names.
    """
    site = built_site / language if language else built_site
    ids: dict[str, set[str]] = {}

    def heading_ids(page: str) -> set[str]:
        if page not in ids:
            html = (site / page.removesuffix(".md") / "index.html").read_text(encoding="utf-8")
            ids[page] = {match["id"] for match in HEADING_ID.finditer(html)}
        return ids[page]

    missing = []
    for name, function in acceptance_tests():
        mark = levels_of(function)[0]
        for shape in SHAPES:
            page, anchor = taught(mark.kwargs["topic"], shape).split("#")
            if anchor not in heading_ids(page):
                missing.append(f"{name} ({shape}): {page}#{anchor}")
    missing += [
        f"{page}#{anchor}" for page, anchor in sorted(sections_named())
        if anchor not in heading_ids(page)
    ]  # fmt: skip
    assert missing == []
    assert len(ids) >= 6  # It read the pages of every shape.
    assert "a-crawl-in-the-simulated-world" in ids["build-your-own.md"]


NAME_ROW = re.compile(r"^\| `(?P<name>\w+)` \| `(?P<module>[\w.]+)` \|", re.MULTILINE)


@pytest.mark.parametrize("page", ["build-your-own.md", "build-your-own.zh.md"])
def test_each_name_is_where_the_page_says(page: str) -> None:
    """The table "Where each name comes from" names the module each name imports from."""
    rows = NAME_ROW.findall((ROOT / "docs" / page).read_text(encoding="utf-8"))
    wrong = [f"{name} in {module}" for name, module in rows
             if not hasattr(importlib.import_module(module), name)]  # fmt: skip
    assert wrong == []
    names = {name for name, _ in rows}
    assert {"CarefulConnector", "new_attempt", "STALE_ERRORS", "origin_of"} <= names
    assert {"UNASKED_UPGRADE", "ACCEPT_ENCODING", "BodyDecoder", "PrivateAddress"} <= names


# --- The summary's lines ----------------------------------------------------------


def summary_of(
    grade: Grade, columns: int, monkeypatch: pytest.MonkeyPatch, **options: int
) -> list[str]:
    """Return the summary lines of ``grade`` at a terminal ``columns`` wide (-q).

    ``options`` are the command line's (``seeds=5``, ``one_seed=3``); none by default.
    """
    monkeypatch.setenv("COLUMNS", str(columns))
    config = SimpleNamespace(
        getoption=lambda name, default=None: options.get(name, default),
        get_verbosity=lambda: 0,
    )
    return Grader(config).summary(grade)  # type: ignore[arg-type]


def failed_grade(deselected: int = 0) -> Grade:
    """Return the grade of a crawler that failed two cases of one level-4 test."""
    message = "Failed: the crawl did not finish within 5 seconds: " + "a URL was lost " * 12
    grade = Grade("mine", ran={1, 2, 3, 4}, deselected=deselected)
    grade.failures["test_x"] = Failure(
        "test_x", 4, "fetching-one-url", "real-asyncio.md#redirects", message, ["500", "502"]
    )
    return grade


def test_a_long_message_is_wrapped_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = summary_of(failed_grade(), 60, monkeypatch)
    assert lines[0] == f"level {TOP} of {TOP}: passed 3, failed at 4"
    assert all(len(line) <= 60 for line in lines)
    told = " ".join(line.strip() for line in lines)
    assert failed_grade().failures["test_x"].message.strip() in told  # Nothing cut.
    assert "test_x [500, 502]: rule docs/contract.md#fetching-one-url" in told


def test_with_tests_deselected_the_grade_says_which_levels_ran(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    grade = failed_grade(deselected=230)
    grade.ran = {4}  # -k chose one test of level 4.
    lines = summary_of(grade, 200, monkeypatch)
    assert lines[0] == f"level {TOP} of {TOP}, 230 tests deselected: ran level 4; failed at 4"


def test_a_crawler_that_passes_every_level_is_told_so(monkeypatch: pytest.MonkeyPatch) -> None:
    grade = Grade("mine", ran=set(range(1, TOP + 1)))
    assert summary_of(grade, 80, monkeypatch) == [f"level {TOP} of {TOP}: passed {TOP}"]


OFFER = "the simulated tests ran under one schedule; to hunt races, run them under 100:"


@pytest.mark.parametrize("failed", [True, False])
def test_a_package_is_offered_the_command_that_hunts_races(
    monkeypatch: pytest.MonkeyPatch, failed: bool
) -> None:
    grade = failed_grade() if failed else Grade("mine", ran=set(range(1, TOP + 1)))
    grade.package = "mine"
    lines = summary_of(grade, 200, monkeypatch)
    assert lines[-1] == f"{OFFER} pytest mine --seeds 100"
    assert lines[:-1] == summary_of(dataclasses.replace(grade, package=""), 200, monkeypatch)


def test_on_a_narrow_terminal_the_command_keeps_a_line_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    grade = Grade("mine", ran=set(range(1, TOP + 1)), package="mine")
    lines = summary_of(grade, 50, monkeypatch)
    assert lines[-1] == "  pytest mine --seeds 100"
    assert all(len(line) <= 50 for line in lines)
    assert " ".join(lines[1:-1]) == OFFER


@pytest.mark.parametrize("given", [{"seeds": 5}, {"one_seed": 3}, {"one_seed": 0}])
def test_no_command_is_offered_once_seeds_are_chosen(
    monkeypatch: pytest.MonkeyPatch, given: dict[str, int]
) -> None:
    grade = Grade("mine", ran=set(range(1, TOP + 1)), package="mine")
    assert summary_of(grade, 200, monkeypatch, **given) == [f"level {TOP} of {TOP}: passed {TOP}"]


def test_a_file_of_tests_is_offered_no_command(monkeypatch: pytest.MonkeyPatch) -> None:
    grade = Grade("tests/broken/x.py::TestAsyncio", ran={1, 2})  # Not a package.
    assert not any("--seeds" in line for line in summary_of(grade, 200, monkeypatch))


def test_a_grade_of_tests_named_one_by_one_says_which_levels_ran(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    grade = failed_grade()
    grade.ran, grade.chosen = {4}, 1  # One test named by its id, as a replay does.
    lines = summary_of(grade, 200, monkeypatch)
    assert lines[0] == f"level {TOP} of {TOP}, 1 test named: ran level 4; failed at 4"


def test_the_seed_of_a_test_id_from_an_xdist_worker_is_found() -> None:
    grouped = "mine/tests/test_acceptance.py::TestAcceptance::test_x[3-seed12]@grade-mine"
    plain = without_group(grouped)
    assert plain == "mine/tests/test_acceptance.py::TestAcceptance::test_x[3-seed12]"
    assert seed_of(plain) == 12
    assert without_group("t.py::test_x[a@b-seed1]") == "t.py::test_x[a@b-seed1]"
    assert seed_of(without_group("t.py::test_x@docs_site")) is None


# --- What the acceptance suite says of a crawl ------------------------------------


def test_a_hung_crawl_says_where_it_waits() -> None:
    release = threading.Event()

    async def main() -> None:
        await asyncio.get_running_loop().run_in_executor(None, release.wait)

    thread = threading.Thread(target=lambda: asyncio.run(main()), daemon=True)
    thread.start()
    try:
        assert poll(lambda: " in main (" in where(thread))  # The task's coroutine, by name.
        said = where(thread)
        assert said.startswith("; it was waiting ") and "tests/test_grader.py:" in said, said
    finally:
        release.set()
        thread.join()


def test_every_lookup_of_a_crawl_under_test_goes_through_the_offline_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Elsewhere(aiohttp.ThreadedResolver):  # As aiodns's AsyncResolver would be.
        pass

    monkeypatch.setattr(aiohttp.connector, "DefaultResolver", Elsewhere)
    keep_offline(monkeypatch)

    async def resolver() -> type:
        connector = aiohttp.TCPConnector()
        try:
            return type(connector._resolver)
        finally:
            await connector.close()

    assert asyncio.run(resolver()) is aiohttp.ThreadedResolver
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo("www.example.com", 80)


def test_a_duplicate_record_is_named() -> None:
    stat = FetchStatistic(
        url="http://127.0.0.1:1/a", next_url=None, status=200, exception=None, size=0,
        content_type=None, encoding=None, num_urls=0, num_new_urls=0,
    )  # fmt: skip
    other = stat._replace(url="http://127.0.0.1:1/b")
    crawler = SimpleNamespace(done=[stat, other, stat])
    assert recorded_twice(crawler) == (
        "; recorded more than once: 'http://127.0.0.1:1/a (2 records)'"
    )
    assert recorded_twice(SimpleNamespace(done=[stat, other])) == ""
