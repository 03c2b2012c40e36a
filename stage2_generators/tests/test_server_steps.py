"""The server chapter's steps: each runs as the chapter shows it and does what it says.

Each step is a whole program (``python -m stage2_generators.server.steps.NAME``)
that starts its own server on a free port, runs its clients and stops; it
must finish quietly (nothing on stderr: no traceback, no task left pending)
within a deadline.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STEPS = ["accept", "buffered", "drain", "idle", "lock", "llhttp"]  # In the chapter's order.
MAX_LINES = 100


pytestmark = pytest.mark.slow  # Each test starts a Python subprocess.


def run_step(name: str) -> list[str]:
    """Run the step and return the lines it printed."""
    done = subprocess.run(
        [sys.executable, "-m", f"stage2_generators.server.steps.{name}"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr
    return done.stdout.splitlines()


def test_accept_serves_each_client_in_a_task_of_its_own() -> None:
    assert run_step("accept") == [
        "sent 'hello', got 'HELLO'",
        "sent 'from three', got 'FROM THREE'",
        "sent 'clients at once', got 'CLIENTS AT ONCE'",
    ]


def test_buffered_writer_is_watched_only_while_it_holds_bytes() -> None:
    assert run_step("buffered") == [
        "kept in the buffer: True, watched: True",
        "client read 4,194,304 bytes",
        "kept in the buffer: False, watched: False",
    ]


def test_drain_bounds_the_buffer() -> None:
    without, with_drain = run_step("drain")
    assert without.startswith("without drain:") and without.endswith("chunk: False")
    assert with_drain.startswith("with drain:") and with_drain.endswith("chunk: True")


def test_idle_clients_are_hung_up_on() -> None:
    assert sorted(run_step("idle")) == [
        "client after talking: the server hung up",
        "client that never talked: the server hung up",
        "client: got 'HELLO'",
        "server: 0.2 s without a word, hanging up",
        "server: 0.2 s without a word, hanging up",
    ]


def test_lock_fixes_the_lost_updates() -> None:
    assert run_step("lock") == [
        "without a lock: 10 visits, the counter says 1; visitor numbers given out: [1]",
        "with a lock: 10 visits, the counter says 10; visitor numbers given out: "
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]",
    ]


def test_llhttp_keeps_what_asks_to_be_kept_and_refuses_an_unknown_method() -> None:
    assert run_step("llhttp") == [
        # The fourth request comes after "close": it is never read, never answered.
        "GET / HTTP/1.1 + GET / HTTP/1.0 + GET / HTTP/1.0 + GET / HTTP/1.0 "
        "-> 200 keep-alive, 200 keep-alive, 200 close",
        "BREW / HTTP/1.1 -> 400 close",
    ]


@pytest.mark.parametrize("name", STEPS)
def test_steps_are_short_and_import_only_earlier_steps(name: str) -> None:
    path = ROOT / "stage2_generators" / "server" / "steps" / f"{name}.py"
    source = path.read_text()
    assert len(source.splitlines()) <= MAX_LINES
    earlier = {f"stage2_generators.server.steps.{step}" for step in STEPS[: STEPS.index(name)]}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and "server.steps" in (node.module or ""):
            names = {f"{node.module}.{alias.name}" for alias in node.names}
            assert node.module in earlier or names <= earlier, node.module
