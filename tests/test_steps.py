"""The steps: every small program of every stage runs, and does what it says.

Each step runs as its chapter shows it, ``python -m PACKAGE.steps.NAME URL``,
against one test site shared by the whole module, with a deadline so that a
step that hangs fails instead.  Steps that fetch a fixed list print one
status line per page; the crawling steps must record exactly the URLs and
statuses that the site's oracle says a full crawl finds, each once.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.testsite.server import ServerThread, make_app
from shared.testsite.site import expected_results

pytestmark = pytest.mark.slow  # Every test here runs Python in a subprocess.

ROOT = Path(__file__).resolve().parent.parent
PAGES = 10  # The smallest site: the crawling steps stay quick.
STEP_DEADLINE = 60  # Seconds; a step takes well under one when all is well.
# Every step, in the order the chapters teach them.
STEPS = [
    "stage1_callbacks.steps.blocking",
    "stage1_callbacks.steps.threads",
    "stage1_callbacks.steps.nonblocking",
    "stage1_callbacks.steps.callback",
    "stage1_callbacks.steps.fetcher",
    "stage1_callbacks.steps.crawl",
    "stage2_generators.steps.future",
    "stage2_generators.steps.yield_from",
    "stage2_generators.steps.queues",
    "stage2_generators.steps.crawl",
    "stage2_generators.steps.tasks",
    "stage2_generators.steps.async_crawl",
    "stage2_generators.steps.taskgroup",
    "stage2_generators.steps.timeout",
    "stage3_asyncio.steps.crawl",
]
FIXED_LIST_STEPS = [
    "stage1_callbacks.steps.blocking",
    "stage1_callbacks.steps.threads",
    "stage1_callbacks.steps.fetcher",
    "stage2_generators.steps.future",
    "stage2_generators.steps.yield_from",
    "stage2_generators.steps.queues",
    "stage2_generators.steps.tasks",
    "stage2_generators.steps.taskgroup",
    "stage2_generators.steps.timeout",
]
CRAWLING_STEPS = [step for step in STEPS if step.endswith("crawl")]
# Steps that the chapter shows after cancellation, built on the finished
# stage 2 (its Task can be cancelled), and the modules of it they may use.
ON_FINISHED_STAGE2 = {"stage2_generators.steps.taskgroup", "stage2_generators.steps.timeout"}
FINISHED_STAGE2 = {"stage2_generators.futures", "stage2_generators.loop", "stage2_generators.tasks"}
MAX_LINES = 100  # The chapters aim at 80; no step may grow far past it.
# The stage 2 steps print each page as "  0.052 s   3 in flight  OUTCOME URL":
# the seconds since the step started, and the fetches in flight, this one
# included (shared.steps.Progress).
PROGRESS = re.compile(
    r" *(?P<seconds>[0-9]+\.[0-9]{3}) s +(?P<count>[0-9]+) in flight  (?P<rest>.+)"
)
STAGE2_STEPS = [step for step in STEPS if step.startswith("stage2_generators.")]


@pytest.fixture(scope="module")
def site() -> Iterator[ServerThread]:
    """One test site for every step of the module."""
    with ServerThread(make_app(PAGES)) as server:
        yield server


def run_step(step: str, url: str) -> list[str]:
    """Run ``python -m step url`` and return the lines it printed; it must succeed quietly."""
    done = subprocess.run(
        [sys.executable, "-m", step, url],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=STEP_DEADLINE,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr  # No traceback, no warning, no task left pending.
    return done.stdout.splitlines()


def outcome(line: str) -> str:
    """Return a page's line without the time and the count in flight, if it has them."""
    progress = PROGRESS.fullmatch(line)
    return progress["rest"] if progress else line


def ten_pages(url: str) -> set[str]:
    """The URLs that the fixed-list steps fetch: the root and pages 1 to 9."""
    return {url} | {f"{url}pages/{n}/" for n in range(1, 10)}


@pytest.mark.parametrize("step", ["nonblocking", "callback"])
def test_one_fetch(site: ServerThread, step: str) -> None:
    lines = run_step(f"stage1_callbacks.steps.{step}", site.url)
    assert lines[0] == f"HTTP/1.0 200 OK {site.url}"
    assert re.fullmatch(r"1 page in [0-9.]+ s, [0-9.]+ s of it busy on the CPU", lines[1])
    summary = {
        "nonblocking": r"asked the socket [0-9]+ times in vain",
        "callback": r"the loop woke up [1-9][0-9]* times",
    }[step]
    assert re.fullmatch(summary, lines[-1]), lines


@pytest.mark.parametrize("step", FIXED_LIST_STEPS)
def test_fixed_list_of_pages(site: ServerThread, step: str) -> None:
    lines = run_step(step, site.url)
    outcomes = [outcome(line) for line in lines]
    fetched = [line for line in outcomes if line.startswith("HTTP/")]
    summary = outcomes[len(fetched) :]  # The timing, for some how often the loop woke.
    assert sorted(fetched) == sorted(f"HTTP/1.0 200 OK {url}" for url in ten_pages(site.url))
    assert outcomes[: len(fetched)] == fetched, "the status lines come first"
    assert summary[0].startswith("10 pages"), summary
    if step == "stage2_generators.steps.tasks":  # It counts the failures too.
        assert re.fullmatch(r"10 pages, 0 failed, in [0-9.]+ s", summary[0]), summary
    if step.startswith("stage1_callbacks."):  # Each prints how long it took.
        assert re.fullmatch(r"10 pages in [0-9.]+ s, .+", summary[0]), summary


@pytest.mark.parametrize("step", CRAWLING_STEPS)
def test_crawling_step_finds_exactly_the_site(site: ServerThread, step: str) -> None:
    lines = run_step(step, site.url)
    *fetched, summary = lines
    pairs = (outcome(line).split(" ", 1) for line in fetched)
    results = [(url, int(status)) for status, url in pairs]
    expected = {(url, status) for url, status, _ in expected_results(site.url, PAGES)}
    assert len(results) == len(set(results)), "a URL was fetched twice"
    assert set(results) == expected
    assert re.fullmatch(rf"{len(expected)} URLs in [0-9.]+ s", summary), summary


# Each stage 2 step, and the most fetches it may have in flight at once.
MOST_IN_FLIGHT = {
    "future": 10,
    "yield_from": 10,
    "queues": 3,
    "crawl": 10,
    "tasks": 10,
    "async_crawl": 10,
    "taskgroup": 10,
    "timeout": 10,
}


@pytest.mark.parametrize("step", STAGE2_STEPS)
def test_stage2_step_shows_time_and_fetches_in_flight(site: ServerThread, step: str) -> None:
    *pages, summary = run_step(step, site.url)
    progress = [PROGRESS.fullmatch(line) for line in pages]
    assert all(progress), pages
    seconds = [float(match["seconds"]) for match in progress if match]
    counts = [int(match["count"]) for match in progress if match]
    assert seconds == sorted(seconds), "the time goes forward"
    most = MOST_IN_FLIGHT[step.rsplit(".", 1)[1]]
    if step in CRAWLING_STEPS:
        assert 1 <= max(counts) <= most, counts  # The site's links decide.
    else:
        assert max(counts) == most, counts  # Never more, and all of them at once.
    assert counts[-1] == 1, "the last page to come back is the only one left"
    assert re.search(r" in [0-9]+\.[0-9]{3} s", summary), summary


@contextlib.contextmanager
def refusing_url() -> Iterator[str]:
    """Yield the URL of a port where nothing listens: connections are refused."""
    with socket.socket() as unheard:
        unheard.bind(("127.0.0.1", 0))  # Bound, so no one else takes it; never listening.
        yield f"http://127.0.0.1:{unheard.getsockname()[1]}/"


def test_an_error_stops_the_stage2_crawl_step_with_a_traceback() -> None:
    """As its docstring says: nothing catches it, the program dies with status 1."""
    with refusing_url() as url:
        done = subprocess.run(
            [sys.executable, "-m", "stage2_generators.steps.crawl", url],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=STEP_DEADLINE,
        )
    assert done.returncode == 1
    assert done.stderr.startswith("Traceback (most recent call last):")
    assert "in work\n" in done.stderr, "the coroutine's callers are in the traceback"
    assert done.stderr.splitlines()[-1].startswith("ConnectionRefusedError")


def test_the_tasks_step_catches_each_error_where_it_waits() -> None:
    """A failed task's error reaches the coroutine waiting for it; the program goes on."""
    with refusing_url() as url:
        lines = run_step("stage2_generators.steps.tasks", url)
    *failures, summary = lines
    pattern = re.compile(r" *[0-9.]+ s  ConnectionRefusedError (?P<url>\S+)")
    matches = [pattern.fullmatch(line) for line in failures]
    assert all(matches), failures
    assert {match["url"] for match in matches if match} == ten_pages(url)
    assert re.fullmatch(r"10 pages, 10 failed, in [0-9.]+ s", summary), summary


@pytest.mark.parametrize("step", STAGE2_STEPS)
def test_stage2_step_fits_80_columns(step: str) -> None:
    """The chapter shows the whole file, in a code column of 80 characters."""
    long = [line for line in source_of(step).splitlines() if len(line) > 80]
    assert not long, long


# --- What a step may be ------------------------------------------------------


def source_of(step: str) -> str:
    spec = importlib.util.find_spec(step)
    assert spec is not None and spec.origin is not None, step
    return Path(spec.origin).read_text(encoding="utf-8")


@pytest.mark.parametrize("step", STEPS)
def test_step_is_short_and_says_what_is_still_wrong(step: str) -> None:
    source = source_of(step)
    assert source.count("\n") <= MAX_LINES
    docstring = ast.get_docstring(ast.parse(source)) or ""
    assert "Still wrong:" in docstring, "the docstring says what the next step is for"
    assert 'if __name__ == "__main__":' in source, "a step is a program"


@pytest.mark.parametrize("index", range(len(STEPS)), ids=STEPS)
def test_step_names_the_step_after_it(index: int) -> None:
    """A docstring that names the next step names the one that really comes next."""
    docstring = ast.get_docstring(ast.parse(source_of(STEPS[index]))) or ""
    named = re.findall(r"(?:[Tt]he next step|Next), ``(\w+)``", docstring)
    following = STEPS[index + 1 : index + 2]
    assert [f"{STEPS[index].rsplit('.', 1)[0]}.{name}" for name in named] in ([], following)


@pytest.mark.parametrize("index", range(len(STEPS)), ids=STEPS)
def test_step_uses_only_earlier_steps_and_the_standard_library(index: int) -> None:
    step = STEPS[index]
    allowed = set(STEPS[:index]) | {"shared.web.links", "shared.steps"}  # shared.steps: plumbing.
    if step.startswith("stage3_asyncio"):
        allowed.add("aiohttp")
    if step in ON_FINISHED_STAGE2:
        allowed |= FINISHED_STAGE2
    tree = ast.parse(source_of(step))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module in allowed:
            names = [node.module]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").endswith(".steps"):
            names = [f"{node.module}.{alias.name}" for alias in node.names]  # A step module.
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            assert top in sys.stdlib_module_names or name in allowed, f"{step} imports {name}"


def test_steps_package_docstrings_list_every_step() -> None:
    for package in ("stage1_callbacks.steps", "stage2_generators.steps", "stage3_asyncio.steps"):
        listed = re.findall(r"``(\w+)``:", importlib.import_module(package).__doc__ or "")
        steps = [step.rsplit(".", 1)[1] for step in STEPS if step.startswith(package + ".")]
        assert listed == steps, package
