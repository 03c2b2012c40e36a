"""Tests of the journal of stage 2's loop (shared/record/journal.py) and its player page.

A scripted run, two tasks on a socket pair with no timer, takes the same
turns every time: the test knows each turn, each callback, each frame
(file, line, function) and each wait, and checks the journal holds those.
A crawl of the test site is not the same twice (which socket is ready
first), so there the test checks what holds in any run: a task resumes
where it stopped, and each socket waited on is in the selector.
"""

from __future__ import annotations

import inspect
import json
import socket
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from shared.cli import main as cli
from shared.record import journal as journal_module
from shared.record.journal import NO_JOURNAL, Journal, expand, player_page
from shared.testsite.server import ServerThread, make_app
from stage2_generators.crawler import Crawler
from stage2_generators.loop import EventLoop

# --- A scripted run ---------------------------------------------------------------------------


def reader(loop: EventLoop, sock: socket.socket) -> Generator[Any, None, bytes]:
    data = yield from loop.sock_recv(sock, 100)  # Nothing sent yet: waits.
    return data


def writer(loop: EventLoop, sock: socket.socket) -> Generator[Any, None, None]:
    yield  # One turn for the others.
    yield from loop.sock_sendall(sock, b"hi")


def line_of(function: Any, text: str) -> int:
    """Return the number of the line of ``function`` that holds ``text``."""
    lines, first = inspect.getsourcelines(function)
    return first + next(n for n, line in enumerate(lines) if text in line)


HERE = "tests/test_journal.py"
READ_LINE = (HERE, line_of(reader, "sock_recv"), "reader")
# Where sock_recv waits for the socket: the yield from in its loop.
RECV_LINE = (
    "stage2_generators/loop.py",
    line_of(EventLoop.sock_recv, "yield from self._wait_ready"),
    "EventLoop.sock_recv",
)


def run_scripted() -> tuple[dict[str, Any], int]:
    """Return the journal of the scripted run, and the reading socket's descriptor."""
    a, b = socket.socketpair()
    with a, b:
        a.setblocking(False)
        b.setblocking(False)
        journal = Journal()
        loop = EventLoop(journal=journal)
        try:
            task = loop.create_task(reader(loop, a), name="reader")
            loop.create_task(writer(loop, b), name="writer")
            assert loop.run_until_complete(task) == b"hi"
        finally:
            loop.close()
        return journal.data(), a.fileno()


@pytest.fixture(scope="module")
def scripted() -> tuple[dict[str, Any], int]:
    """The journal of the scripted run, and the reading socket's descriptor."""
    return run_scripted()


def frames(data: dict[str, Any], numbers: list[int]) -> list[tuple[str, int, str]]:
    """Return the frames ``numbers`` stand for: (file, line, function)."""
    return [tuple(data["frames"][number]) for number in numbers]  # type: ignore[misc]


def summary(data: dict[str, Any], step: dict[str, Any]) -> tuple[Any, ...]:
    """Return a step as the test writes it: turn, kind, and what ran or woke."""
    if step["kind"] == "select":
        return step["turn"], "select", [fd for fd, _ in step["events"]]
    callback = step["callback"]
    who = callback.get("task", callback.get("wakes"))
    return step["turn"], callback["fn"], data["tasks"][who] if who is not None else None


def test_the_journal_holds_the_turns_the_loop_takes(scripted: tuple[dict[str, Any], int]) -> None:
    data, fd = scripted
    assert data["tasks"] == ["reader", "writer"]
    assert [summary(data, step) for step in data["steps"]] == [
        (1, "select", []),
        (1, "Task._step", "reader"),  # Starts, finds no data, waits.
        (1, "Task._step", "writer"),  # Starts, gives a turn.
        (2, "select", []),
        (2, "Task._step", "writer"),  # Sends and ends.
        (3, "select", [fd]),  # Nothing ready: select() waits for the socket.
        (3, "_wake", "reader"),
        (4, "select", []),
        (4, "Task._wakeup", "reader"),  # Reads and ends.
        (5, "select", []),
        (5, "_run_until_complete_cb", None),
    ]


def test_a_task_step_has_the_frames_it_resumed_at_and_suspended_at(
    scripted: tuple[dict[str, Any], int],
) -> None:
    data, fd = scripted
    steps = data["steps"]
    first, last = steps[1], steps[8]
    assert frames(data, first["resumed"]) == [(HERE, reader.__code__.co_firstlineno, "reader")]
    assert frames(data, first["suspended"]) == [READ_LINE, RECV_LINE]
    assert last["resumed"] == first["suspended"]
    assert last["waited"] == {"kind": "socket", "fd": fd, "event": "read"}
    assert last["suspended"] == []
    writer_yield = (HERE, line_of(writer, "yield  #"), "writer")
    assert frames(data, steps[2]["suspended"]) == [writer_yield]
    assert expand(data)[2]["tasks"][1]["state"] == "ready"  # Back in the ready queue.


def test_the_state_shows_who_waits_on_which_socket(scripted: tuple[dict[str, Any], int]) -> None:
    data, fd = scripted
    states = expand(data)
    after_reader = states[1]
    assert after_reader["sockets"] == [{"fn": "_wake", "wakes": 0, "fd": fd}]
    assert after_reader["tasks"][0] == {
        "state": "waiting",
        "frames": data["steps"][1]["suspended"],
        "waits": {"kind": "socket", "fd": fd, "event": "read"},
    }
    assert after_reader["tasks"][1]["state"] == "new"
    assert after_reader["ready"] == [{"fn": "Task._step", "task": 1}]
    woken = states[6]  # After _wake: unregistered, the task ready.
    assert woken["sockets"] == []
    assert woken["ready"] == [{"fn": "Task._wakeup", "task": 0, "fd": fd}]
    assert [task["state"] for task in states[-1]["tasks"]] == ["done", "done"]


def test_the_journal_keeps_the_source_of_the_files_its_frames_are_in(
    scripted: tuple[dict[str, Any], int],
) -> None:
    data, _ = scripted
    assert set(data["files"]) == {HERE, "stage2_generators/loop.py"}
    loop_source = Path(journal_module.ROOT, "stage2_generators/loop.py").read_text(encoding="utf-8")
    assert data["files"]["stage2_generators/loop.py"] == loop_source
    assert json.loads(json.dumps(data)) == data


def test_a_step_holds_what_changed(scripted: tuple[dict[str, Any], int]) -> None:
    data, fd = scripted
    # The writer's step changes the writer alone: its next step is in the
    # ready queue in place of this one, the same callback.
    assert data["steps"][2]["state"] == {
        "tasks": {"1": {"state": "ready", "frames": data["steps"][2]["suspended"]}},
    }
    assert data["steps"][3]["state"] == {}  # select() returned nothing, and no timer was due.
    assert data["steps"][4]["state"]["ready"] == []  # The writer's last step.
    assert expand(data)[3]["sockets"] == [{"fn": "_wake", "wakes": 0, "fd": fd}]


def fails() -> Generator[None, None, None]:
    yield
    raise ValueError("on purpose")


def test_a_task_ends_done_failed_or_cancelled() -> None:
    journal = Journal()
    loop = EventLoop(journal=journal)
    try:
        done = loop.create_task(turns(1), name="a")
        failed = loop.create_task(fails(), name="b")
        cancelled = loop.create_task(turns(5), name="c")
        loop.run_until_complete(done)
        cancelled.cancel()
        loop.run_until_complete(turns(2))
        assert failed._log_traceback  # Not counted as retrieved by the journal.
        failed.exception()
    finally:
        loop.close()
    last = expand(journal.data())[-1]["tasks"]
    assert [task["state"] for task in last[:3]] == ["done", "failed", "cancelled"]


def test_a_journal_stops_at_its_limit() -> None:
    journal = Journal(limit=4)
    loop = EventLoop(journal=journal)
    try:
        loop.run_until_complete(loop.create_task(turns(5)))
    finally:
        loop.close()
    assert len(journal.steps) == 4 and journal.data()["truncated"] is True


def turns(count: int) -> Generator[None, None, None]:
    for _ in range(count):
        yield


def test_a_loop_without_a_journal_keeps_none() -> None:
    loop = EventLoop()
    try:
        loop.run_until_complete(loop.create_task(turns(3)))
    finally:
        loop.close()
    assert loop._journal is NO_JOURNAL and NO_JOURNAL.steps == []


# --- A real crawl -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def crawl_journal() -> dict[str, Any]:
    """The journal of stage 2 crawling 8 pages of a 10-page test site with 3 workers."""
    with ServerThread(make_app(10, latency=0.002)) as server:
        crawler = Crawler([server.url], max_tasks=3, max_pages=8)
        journal = Journal()
        journal.watch_queue(crawler.q)
        loop = EventLoop(journal=journal)
        try:
            loop.run_until_complete(crawler.crawl())
        finally:
            loop.close()
        assert crawler.pages_fetched == 8
    return journal.data()


def test_a_crawl_task_resumes_where_it_stopped(crawl_journal: dict[str, Any]) -> None:
    steps = crawl_journal["steps"]
    task_steps = 0
    states = expand(crawl_journal)
    for before, step in zip(states, steps[1:], strict=False):
        if "task" in step and step["task"] < len(before["tasks"]):
            assert step["resumed"] == before["tasks"][step["task"]]["frames"]
            task_steps += 1
    assert task_steps > 20


def test_a_crawl_worker_waits_in_the_crawlers_code(crawl_journal: dict[str, Any]) -> None:
    names = crawl_journal["tasks"]
    assert names[:4] == ["Task-1", "worker 1", "worker 2", "worker 3"]
    functions = {
        crawl_journal["frames"][number][2]
        for step in crawl_journal["steps"]
        if names[step.get("task", 0)].startswith("worker")
        for number in step.get("suspended", [])
    }
    # The chain goes through the crawler down to the socket.
    assert {"Crawler.work", "Crawler.fetch", "Crawler.request", "Crawler.read_all"} <= functions
    assert "EventLoop.sock_recv" in functions


def test_each_socket_waited_on_is_in_the_selector(crawl_journal: dict[str, Any]) -> None:
    waits = 0
    for state in expand(crawl_journal):
        watched = {(socket["fd"], socket.get("wakes")) for socket in state["sockets"]}
        for number, task in enumerate(state["tasks"]):
            if task["state"] == "waiting" and task.get("waits", {}).get("kind") == "socket":
                assert (task["waits"]["fd"], number) in watched
                waits += 1
    assert waits > 0


def test_the_crawl_queue_is_shown_and_ends_empty(crawl_journal: dict[str, Any]) -> None:
    queues = [state["queue"] for state in expand(crawl_journal)]
    assert any(queue for queue in queues)
    assert all(url.startswith("http://127.0.0.1:") for queue in queues for url in queue)
    assert queues[-1] == []


# --- The command line and the player page ----------------------------------------------------


def test_journal_needs_stage_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exit:
        cli.main(["--stage", "asyncio", "--journal", str(tmp_path / "j.json")])
    assert exit.value.code == cli.EXIT_USAGE
    assert "--journal needs --stage generators" in capsys.readouterr().err
    assert not (tmp_path / "j.json").exists()


def test_crawl_writes_a_journal(tmp_path: Path) -> None:
    out = tmp_path / "deep" / "j.json"
    with ServerThread(make_app(10)) as server:
        argv = [server.url, "--stage", "generators", "--max-pages", "3", "--max-tasks", "2", "-q"]
        assert cli.main([*argv, "--journal", str(out)]) == cli.EXIT_OK
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["format"] == "stage2-journal" and "worker 1" in data["tasks"]
    assert data["steps"][0]["kind"] == "select"


def test_the_player_page_holds_the_journal_and_asks_for_nothing(
    scripted: tuple[dict[str, Any], int],
) -> None:
    data, _ = scripted
    odd = {**data, "files": {**data["files"], "x.py": 'print("</script>")\n'}}
    page = player_page(odd, "zh")
    assert '<html lang="zh">' in page
    assert page.count("</script>") == 2  # The journal's and the player's: none from the data.
    start = page.index('class="replay-data">') + len('class="replay-data">')
    end = page.index("</script>")
    assert json.loads(page[start:end]) == odd
    around = page[:start] + page[end:]  # The page without the journal's text.
    assert "src=" not in around and "href=" not in around and "url(" not in around


def test_the_player_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "j.json"
    journal.write_text('{"format": "something else"}', encoding="utf-8")
    assert journal_module.main([str(journal)]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "not a journal" in error
    Journal().write(journal)  # A loop that never turned: nothing to replay.
    assert journal_module.main([str(journal)]) == 1
    assert "holds no step" in capsys.readouterr().err
    journal_module.save(run_scripted()[0], journal)
    assert journal_module.main([str(journal), "-o", str(tmp_path / "p.html")]) == 0
    assert (tmp_path / "p.html").read_text(encoding="utf-8").startswith("<!doctype html>")
