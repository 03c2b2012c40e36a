"""The exercises at the end of the chapters, checked the way a reader runs them.

Each folder of ``docs/exercises/<chapter>/<name>/`` holds a starting file,
a solution and a test, which checks ``start.py`` unless ``--exercise``
names another file.  For every exercise: its test fails on the starting
file, with the assertion message that tells a reader what to do (not an
import error or a crash), and passes on the solution.  For the exercises
about an interleaving or a server, plausible wrong solutions
(``tests/wrong_exercises/``) fail too, each with the message that names
its mistake.

The starting files and the solutions are run in two pytest processes in
all (a JUnit XML report says how each test ended), the wrong solutions in
one process each; two of these processes run side by side, once per test
run.  The exercises' tests live outside
the ``testpaths`` of pyproject.toml, so a plain ``pytest`` does not
collect them: their failures on the starting files are the reader's to
fix, not the suite's.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.valkey import valkey_binary

pytestmark = pytest.mark.slow  # pytest in a subprocess, and the exercises' servers.

REPO = Path(__file__).resolve().parent.parent
EXERCISES = REPO / "docs" / "exercises"
WRONG = Path(__file__).resolve().parent / "wrong_exercises"
TIMEOUT = 240  # Seconds for a pytest process; the exercises' own deadlines come far sooner.
NO_HYPOTHESIS = ["-p", "no:hypothesispytest"]

# The message each exercise's test gives on its starting file: the words a
# reader acts on, in the first assertion that fails.
START_MESSAGES = {
    "threads/thread_pool": "a pool of 3 threads should share them",
    "threads/socket_timeout": "give the socket a timeout of 0.2 s",
    "callbacks/per_host_limit": "the limit is 2 per host",
    "callbacks/fetch_timeout": "set a timer, self.loop.call_later(self.timeout, ...)",
    "coroutines/worker_survives": "catch the error (try/except) and take the next item",
    "coroutines/semaphore": "exactly the first two should hold it at once",
    "await/wait_for": "wait_for did not raise TimeoutError",
    "await/first_completed": "run the coroutines at once, a task each",
    "server/content_length": "Answer 413 as soon as the head is read",
    "server/max_clients": "answer 503 to a client over MAX_CLIENTS",
    "asyncio/time_limit": "stop waiting for q.join() when the time is up",
    "asyncio/retries": "after a 503, sleep and try again",
    "beyond/leases": "look for the ended ones in take()",
    "beyond/shared_seen": "keep the seen set in the server",
}
NEEDS_VALKEY = {"beyond/shared_seen"}

# Each wrong solution: the exercise it answers, and the message its mistake gets.
WRONG_MESSAGES = {
    "worker_done_only_on_success": (
        "coroutines/worker_survives",
        "every item must be handled and marked done",
    ),
    "worker_finally_without_except": (
        "coroutines/worker_survives",
        "catch the error (try/except) and take the next item",
    ),
    "semaphore_release_wakes_nobody": (
        "coroutines/semaphore",
        "B, the first waiter, should be woken",
    ),
    "semaphore_cancelled_wake_up_is_lost": (
        "coroutines/semaphore",
        "must pass its wake-up on to the next waiter",
    ),
    "wait_for_timer_left_set": (
        "await/wait_for",
        "its timer still fired later and cancelled the task",
    ),
    "wait_for_leaves_the_coroutine_running": (
        "await/wait_for",
        "the coroutine must be cancelled, and have cleaned up, before",
    ),
    "wait_for_every_cancel_is_a_timeout": (
        "await/wait_for",
        "CancelledError, not TimeoutError, should come out",
    ),
    "first_leaves_the_others_running": (
        "await/first_completed",
        "they must not run on",
    ),
    "first_does_not_wait_for_the_cancelled": (
        "await/first_completed",
        "they must not run on",
    ),
    "content_length_compared_as_bytes": (
        "server/content_length",
        "Answer 413 as soon as the head is read",
    ),
    "content_length_counts_the_body": (
        "server/content_length",
        "Answer 413 as soon as the head is read",
    ),
    "max_clients_never_counted_out": (
        "server/max_clients",
        "Count a connection out when it ends, however it ends",
    ),
    "max_clients_one_too_many": (
        "server/max_clients",
        "answer 503 to a client over MAX_CLIENTS",
    ),
}

# What a test ended with: "passed", "skipped", or the failure's message.
Outcomes = dict[str, list[str]]
SIDE_BY_SIDE = 2  # The pytest processes run at once.
PROCESSES = 2 + len(WRONG_MESSAGES)  # The two batches, and one per wrong solution.


def batches(test: Callable[..., None]) -> Callable[..., None]:
    """Mark a test that reads the batches: they run once, on its worker, and in its time.

    The tests that read them share one worker, and the first runs them all,
    waiting out the starting files' deadlines: more than a test's usual
    limit when the machine is busy.
    """
    rounds = -(-PROCESSES // SIDE_BY_SIDE)
    test = pytest.mark.timeout(rounds * TIMEOUT + 60)(test)
    return pytest.mark.xdist_group("exercises")(test)


class Runs(NamedTuple):
    """Each batch's outcomes (by starting file or solution), and each wrong solution's process."""

    batches: dict[str, Outcomes]
    wrong: dict[str, subprocess.CompletedProcess[str]]


def pytest_args(*args: str) -> list[str]:
    """Return the command that runs pytest on ``args`` from the repository root.

    Without Hypothesis's plugin, which no exercise uses: it imports all of
    Hypothesis at the end of a run, half the processor time of each process.
    """
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *NO_HYPOTHESIS, *args]


def run_pytest(args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run pytest on ``args`` from the repository root; return how it ended and what it printed."""
    return subprocess.run(
        pytest_args(*args), cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT
    )


def run_exercises(tmp_path: Path) -> Runs:
    """Run every exercise's test on start.py and on solution.py, and on each wrong solution.

    Return, for start.py and solution.py, each exercise's outcomes; for
    each wrong solution, its pytest process.  The two batches start first,
    the longest; two processes run side by side (each is mostly pytest
    starting up, or waiting out a deadline; more at once would starve the
    solutions' tests of the processor on a busy machine).
    """
    reports = {file: tmp_path / f"{file}.xml" for file in ("start.py", "solution.py")}
    commands = [
        [str(EXERCISES), "--exercise", file, f"--junitxml={report}"]
        for file, report in reports.items()
    ] + [
        [str(EXERCISES / exercise), "--exercise", str(WRONG / f"{variant}.py")]
        for variant, (exercise, _) in WRONG_MESSAGES.items()
    ]
    with ThreadPoolExecutor(SIDE_BY_SIDE) as pool:
        done = list(pool.map(run_pytest, commands))
    outcomes = {}
    for (file, report), batch in zip(reports.items(), done, strict=False):
        output = batch.stdout + batch.stderr
        assert batch.returncode in (0, 1), output  # Tests passed or failed; nothing else.
        outcomes[file] = read_report(report)
    return Runs(outcomes, dict(zip(WRONG_MESSAGES, done[len(reports) :], strict=True)))


def read_report(report: Path) -> Outcomes:
    """Return each exercise's outcomes from a JUnit XML report."""
    outcomes: Outcomes = defaultdict(list)
    for case in ElementTree.parse(report).iter("testcase"):
        # classname: docs.exercises.<chapter>.<name>.test_<name>
        chapter, name = case.get("classname", "").split(".")[2:4]
        problems = [*case.iter("failure"), *case.iter("error")]
        if problems:
            outcomes[f"{chapter}/{name}"] += [p.get("message", "") for p in problems]
        elif any(True for _ in case.iter("skipped")):
            outcomes[f"{chapter}/{name}"].append("skipped")
        else:
            outcomes[f"{chapter}/{name}"].append("passed")
    return outcomes


# Session, not module: xdist may give the one worker of the group other
# tests in between, and a module fixture would then run again.
@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return run_exercises(tmp_path_factory.mktemp("exercises"))


def needs_the_server(exercise: str) -> None:
    """Skip an exercise that needs Valkey where none runs (fails under CI instead)."""
    if exercise in NEEDS_VALKEY:
        valkey_binary()


def test_every_exercise_is_listed_and_whole() -> None:
    folders = {path.parent for path in EXERCISES.glob("*/*/start.py")}
    assert {f"{p.parent.name}/{p.name}" for p in folders} == set(START_MESSAGES)
    for folder in folders:
        tests = list(folder.glob("test_*.py"))
        assert [t.name for t in tests] == [f"test_{folder.name}.py"], folder
        assert (folder / "solution.py").is_file(), folder


def test_a_plain_pytest_does_not_collect_the_exercises() -> None:
    """The README's test command runs the testpaths; the exercises are outside them."""
    settings = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    testpaths = settings["tool"]["pytest"]["ini_options"]["testpaths"]
    assert testpaths and all(not EXERCISES.is_relative_to(REPO / path) for path in testpaths)


@batches
@pytest.mark.parametrize("exercise", sorted(START_MESSAGES))
def test_the_start_fails_with_a_message_to_act_on(exercise: str, runs: Runs) -> None:
    needs_the_server(exercise)
    outcomes = runs.batches["start.py"][exercise]
    failures = [outcome for outcome in outcomes if outcome not in ("passed", "skipped")]
    assert failures, f"every test of {exercise} passed on start.py: {outcomes}"
    # Only assertions fail: no test crashes on an error of the starting file.
    assert all(failure.startswith("AssertionError: ") for failure in failures), failures
    assert START_MESSAGES[exercise] in failures[0], failures[0]


@batches
@pytest.mark.parametrize("exercise", sorted(START_MESSAGES))
def test_the_solution_passes(exercise: str, runs: Runs) -> None:
    needs_the_server(exercise)
    outcomes = runs.batches["solution.py"][exercise]
    assert outcomes and set(outcomes) == {"passed"}, outcomes


@batches
@pytest.mark.parametrize("variant", sorted(WRONG_MESSAGES))
def test_a_wrong_solution_fails_with_its_message(variant: str, runs: Runs) -> None:
    _, message = WRONG_MESSAGES[variant]
    done = runs.wrong[variant]
    assert done.returncode == 1, done.stdout + done.stderr  # Tests failed; nothing else.
    assert message in done.stdout, done.stdout


def test_every_wrong_solution_is_run() -> None:
    assert {path.stem for path in WRONG.glob("*.py")} - {"__init__"} == set(WRONG_MESSAGES)
