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
all, side by side (a JUnit XML report says how each test ended); the
wrong solutions in one process each.  The exercises' tests live outside
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
from pathlib import Path

import pytest

from tests.valkey import valkey_binary

pytestmark = [
    pytest.mark.slow,  # pytest in a subprocess, and the exercises' servers.
    # The first test of the batches runs them all, waiting out the deadlines
    # of the starting files' tests: more than a test's usual limit when busy.
    pytest.mark.timeout(300),
]
# The tests that read the two batches share one worker, which runs each once.
BATCHES = pytest.mark.xdist_group("exercises")

REPO = Path(__file__).resolve().parent.parent
EXERCISES = REPO / "docs" / "exercises"
WRONG = Path(__file__).resolve().parent / "wrong_exercises"
TIMEOUT = 240  # Seconds for a pytest process; the exercises' own deadlines come far sooner.

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


def pytest_args(*args: str) -> list[str]:
    """Return the command that runs pytest on ``args`` from the repository root."""
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]


def run_exercises(tmp_path: Path) -> dict[str, Outcomes]:
    """Run every exercise's test on start.py and on solution.py, side by side.

    Return, for each file, each exercise's outcomes.
    """
    runs = {}
    for file in ("start.py", "solution.py"):
        report = tmp_path / f"{file}.xml"
        command = pytest_args(str(EXERCISES), "--exercise", file, f"--junitxml={report}")
        process = subprocess.Popen(
            command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        runs[file] = (process, report)
    outcomes = {}
    for file, (process, report) in runs.items():
        output, _ = process.communicate(timeout=TIMEOUT)
        assert process.returncode in (0, 1), output  # Tests passed or failed; nothing else.
        outcomes[file] = read_report(report)
    return outcomes


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
def batches(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcomes]:
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


@BATCHES
@pytest.mark.parametrize("exercise", sorted(START_MESSAGES))
def test_the_start_fails_with_a_message_to_act_on(
    exercise: str, batches: dict[str, Outcomes]
) -> None:
    needs_the_server(exercise)
    outcomes = batches["start.py"][exercise]
    failures = [outcome for outcome in outcomes if outcome not in ("passed", "skipped")]
    assert failures, f"every test of {exercise} passed on start.py: {outcomes}"
    # Only assertions fail: no test crashes on an error of the starting file.
    assert all(failure.startswith("AssertionError: ") for failure in failures), failures
    assert START_MESSAGES[exercise] in failures[0], failures[0]


@BATCHES
@pytest.mark.parametrize("exercise", sorted(START_MESSAGES))
def test_the_solution_passes(exercise: str, batches: dict[str, Outcomes]) -> None:
    needs_the_server(exercise)
    outcomes = batches["solution.py"][exercise]
    assert outcomes and set(outcomes) == {"passed"}, outcomes


@pytest.mark.parametrize("variant", sorted(WRONG_MESSAGES))
def test_a_wrong_solution_fails_with_its_message(variant: str) -> None:
    exercise, message = WRONG_MESSAGES[variant]
    done = subprocess.run(
        pytest_args(str(EXERCISES / exercise), "--exercise", str(WRONG / f"{variant}.py")),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 1, done.stdout + done.stderr  # Tests failed; nothing else.
    assert message in done.stdout, done.stdout


def test_every_wrong_solution_is_run() -> None:
    assert {path.stem for path in WRONG.glob("*.py")} - {"__init__"} == set(WRONG_MESSAGES)
