"""The server chapter's steps: each runs as the chapter shows it and does what it says.

Each step is a whole program (``python -m stage2_generators.server.steps.NAME``)
that starts its own server on a free port, runs its clients, says how long
that took and stops; it must finish quietly (nothing on stderr: no
traceback, no task left pending) within a deadline.  With ``--port N`` a
step serves until Ctrl-C instead: the tests talk to it over a real socket,
send it SIGINT, and expect a quiet exit with status 0.
"""

from __future__ import annotations

import ast
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STEPS = ["accept", "buffered", "drain", "idle", "lock", "llhttp"]  # In the chapter's order.
MAX_LINES = 100


pytestmark = pytest.mark.slow  # Each test starts a Python subprocess.


def run_step(name: str) -> list[str]:
    """Run the step and return the lines it printed before its timing."""
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
    *lines, timing = done.stdout.splitlines()
    assert re.fullmatch(r"done in [0-9]+\.[0-9]{3} s", timing), timing
    return lines


def test_accept_serves_each_client_in_a_task_of_its_own() -> None:
    assert run_step("accept") == [
        "sent 'hello', got 'HELLO'",
        "sent 'from three', got 'FROM THREE'",
        "sent 'clients at once', got 'CLIENTS AT ONCE'",
    ]


def test_buffered_writer_is_watched_only_while_it_holds_bytes() -> None:
    assert run_step("buffered") == [
        "server: answer written; kept in the buffer: True, watched: True",
        "client: read 4,194,304 bytes",
        "server: the client is done; kept in the buffer: False, watched: False",
    ]


def test_drain_bounds_the_buffer() -> None:
    without, with_drain = run_step("drain")
    pattern = (
        r"(with|without) drain: at most ([0-9,]+) kB in the buffer; the mark plus a write: 128 kB"
    )
    first, second = re.fullmatch(pattern, without), re.fullmatch(pattern, with_drain)
    assert first and second, (without, with_drain)
    assert first[1] == "without" and int(first[2].replace(",", "")) > 1000
    assert second[1] == "with" and int(second[2].replace(",", "")) <= 128


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
        "without a lock: 10 visits, counted 1; numbers given: [1]",
        "with a lock: 10 visits, counted 10; numbers given: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]",
    ]


def test_llhttp_keeps_what_asks_to_be_kept_and_refuses_an_unknown_method() -> None:
    assert run_step("llhttp") == [
        # The fourth request comes after "close": it is never read, never answered.
        "4 asked, 3 answered: 200 keep-alive, 200 keep-alive, 200 close",
        "1 asked, 1 answered: 400 close",
    ]


@pytest.mark.parametrize("name", STEPS)
def test_steps_are_short_and_import_only_earlier_steps(name: str) -> None:
    path = ROOT / "stage2_generators" / "server" / "steps" / f"{name}.py"
    source = path.read_text()
    assert len(source.splitlines()) <= MAX_LINES
    earlier = {f"stage2_generators.server.steps.{step}" for step in STEPS[: STEPS.index(name)]}
    earlier.add("stage2_generators.server.steps.command")  # The command line they share.
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and "server.steps" in (node.module or ""):
            names = {f"{node.module}.{alias.name}" for alias in node.names}
            assert node.module in earlier or names <= earlier, node.module


@pytest.mark.parametrize("name", [*STEPS, "command"])
def test_steps_fit_80_columns(name: str) -> None:
    """The chapter shows each step whole, in a code column 80 characters wide."""
    path = ROOT / "stage2_generators" / "server" / "steps" / f"{name}.py"
    assert max(len(line) for line in path.read_text().splitlines()) <= 80


# --- Serving until Ctrl-C, with --port N ---------------------------------------------------


def start(name: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", f"stage2_generators.server.steps.{name}", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def port_of(process: subprocess.Popen[str], deadline: float = 30) -> int:
    """Return the port a step in --port mode serves on, from its first line."""
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        assert selector.select(deadline), "the step did not say where it serves"
    first = process.stdout.readline()
    serving = re.fullmatch(r"serving on 127\.0\.0\.1:([0-9]+)\n", first)
    assert serving, first
    return int(serving[1])


def talk(port: int, request: bytes) -> socket.socket:
    """Connect to the step and send ``request``; return the connected socket."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(request)
    return sock


def read_all(sock: socket.socket, size: int) -> bytes:
    """Read ``size`` bytes, or up to the end if the server closes first."""
    data = b""
    while len(data) < size and (piece := sock.recv(2**20)):
        data += piece
    return data


def shouted(port: int) -> None:
    with talk(port, b"hello") as sock:
        assert sock.recv(1024) == b"HELLO"


def big_answer(port: int) -> None:
    with talk(port, b"please") as sock:
        assert read_all(sock, 4 * 2**20) == (b"x" * 63 + b"\n") * 2**16


def hung_up(port: int) -> None:
    with talk(port, b"hello") as sock:
        assert sock.recv(1024) == b"HELLO"
        assert sock.recv(1024) == b""  # Silence, then the server hangs up.


def counted(port: int) -> None:
    for number in (1, 2):
        with talk(port, b"hello") as sock:
            assert read_all(sock, 100) == f"visitor {number}\n".encode()


def http_kept(port: int) -> None:
    with talk(port, b"GET /pages/1/ HTTP/1.1\r\nHost: a\r\n\r\n") as sock:
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200 ") and b"Connection: keep-alive" in first
        sock.sendall(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
        assert read_all(sock, 2**20).startswith(b"HTTP/1.1 200 ")  # Then the end.


SESSIONS: dict[str, Callable[[int], None]] = {
    "accept": shouted,
    "buffered": big_answer,
    "drain": big_answer,
    "idle": hung_up,
    "lock": counted,
    "llhttp": http_kept,
}


@pytest.mark.parametrize("name", STEPS)
@pytest.mark.usefixtures("sigint")
def test_port_mode_serves_until_sigint(name: str) -> None:
    process = start(name, "--port", "0")
    try:
        SESSIONS[name](port_of(process))
        process.send_signal(signal.SIGINT)
        out, errors = process.communicate(timeout=30)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 0, errors
    assert errors == ""  # No traceback, no task left pending.
    assert out.splitlines()[-1] == "stopped"


def test_port_mode_refuses_a_port_it_cannot_have() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        for bad in (str(port), "70000", "eighty"):
            process = start("accept", "--port", bad)
            _, errors = process.communicate(timeout=30)
            assert process.returncode == 2, errors
            assert "Traceback" not in errors
            assert errors.splitlines()[-1].startswith("accept.py: error: "), errors
