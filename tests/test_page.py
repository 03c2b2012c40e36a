"""The page's runner on CPython: a step in the simulated world, as the Run buttons run it.

tests/test_page_browser.py runs every step in the browser and compares
with the command line; these tests check, quickly and without a
browser, what the runner itself promises: the world's modules, the same
lines on every run, the sorted links, an edit and its traceback, the
journal of stage 2's loop, and which listings the docs hook marks.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from shared.page.run import SortedLinks, run_step
from shared.page.world import CALL_COST, LATENCY, PageWorld

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "docs" / "hooks"))
import run_in_page  # type: ignore[import-not-found]  # noqa: E402  The docs hook.

pytestmark = pytest.mark.slow  # Each run imports the project afresh: about a second.


def test_a_run_gives_the_process_back_the_modules_it_had() -> None:
    import shared.web.links

    printed("stage1_callbacks.steps.callback")
    assert sys.modules["shared.web.links"] is shared.web.links


def printed(module: str, **options: Any) -> tuple[str, Any]:
    lines: list[str] = []
    outcome = run_step(module, lines.append, **options)
    return "".join(lines), outcome


def test_a_step_prints_the_same_lines_in_a_fresh_world_each_time() -> None:
    first, outcome = printed("stage1_callbacks.steps.fetcher")
    again, _ = printed("stage1_callbacks.steps.fetcher")
    assert first == again
    assert first.splitlines()[-2:] == [
        "10 pages in 0.050 s, one thread",
        "the loop woke up 21 times",
    ]
    assert outcome.status == 0 and outcome.seconds == pytest.approx(LATENCY, abs=1e-4)


def test_the_busy_loop_asks_a_fixed_number_of_times() -> None:
    """Each call into a socket costs CALL_COST of the clock: 50 ms is 49,999 calls in vain."""
    text, _ = printed("stage1_callbacks.steps.nonblocking")
    assert text.splitlines()[1:] == [
        "1 page in 0.050 s, 0.050 s of it busy on the CPU",
        f"asked the socket {round(LATENCY / CALL_COST) - 1} times in vain",
    ]


def test_a_blocking_socket_waits_on_the_worlds_clock() -> None:
    text, outcome = printed("stage1_callbacks.steps.blocking")
    assert text.splitlines()[-1] == "10 pages in 0.500 s, one after another"


def test_the_world_modules_leave_the_standard_library_in_place() -> None:
    import selectors
    import socket
    import time

    printed("stage1_callbacks.steps.callback")
    assert sys.modules["socket"] is socket and sys.modules["selectors"] is selectors
    assert sys.modules["time"] is time
    world = PageWorld()
    modules = world.modules()
    assert modules["time"].perf_counter() == 0.0
    assert modules["socket"].AF_INET == socket.AF_INET  # The rest is the real module's.


def test_an_edit_runs_and_its_error_is_shown_as_a_terminal_shows_it() -> None:
    source = (REPO / "stage1_callbacks/steps/callback.py").read_text(encoding="utf-8")
    broken = source.replace("todo.remove(url)", "todo.remove(None)")
    text, outcome = printed("stage1_callbacks.steps.callback", source=broken)
    number = broken.splitlines().index("        todo.remove(None)") + 1
    lines = text.splitlines()
    assert outcome.status == 1
    assert lines[1] == "Traceback (most recent call last):"
    assert f'  File "stage1_callbacks/steps/callback.py", line {number}, in read_response' in lines
    assert "        todo.remove(None)" not in lines and "    todo.remove(None)" in lines
    assert lines[-1] == "KeyError: None"
    assert "shared/page/run.py" not in text  # The runner's own frames are left out.


def test_system_exit_ends_the_step_with_its_status() -> None:
    text, outcome = printed("stage1_callbacks.steps.callback", source="raise SystemExit('bye')")
    assert (text, outcome.status) == ("bye\n", 1)


def test_the_links_of_a_page_come_in_sorted_order() -> None:
    links = SortedLinks({"http://b/", "http://c/", "http://a/"})
    assert list(links) == ["http://a/", "http://b/", "http://c/"]
    assert list(links - {"http://b/"}) == ["http://a/", "http://c/"]


def test_a_run_of_stage_2s_loop_keeps_a_journal() -> None:
    _, outcome = printed("stage2_generators.steps.taskgroup", journal=True)
    journal = outcome.journal
    assert journal is not None and journal["simulated"] is True
    assert len(journal["tasks"]) == 11  # main, and a task per page.
    _, step_loop = printed("stage2_generators.steps.future", journal=True)
    assert step_loop.journal is None  # Stage 1's loop keeps none.


def test_the_replays_workers_are_cancelled_and_the_journal_says_so() -> None:
    import replay  # type: ignore[import-not-found]  # The docs hook, as run_in_page.

    journal = replay.journal_of("generators", {})
    woken = [step for step in journal["steps"] if step.get("cancelled")]
    workers = {journal["tasks"][step["task"]] for step in woken}
    assert workers == {"worker 1", "worker 2", "worker 3"}
    assert any(name.startswith("robots.txt") for name in journal["tasks"])


# --- The hook that marks the listings ----------------------------------------------


def rendered(text: str) -> str:
    """Return a code block as Material renders it (one span a line, a line number in each)."""
    lines = "".join(
        f'<span id="__span-0-{n}"><span class="linenos" data-linenos="{n} "></span>'
        f"{line.replace('&', '&amp;').replace('<', '&lt;')}\n</span>"
        for n, line in enumerate(text.splitlines(), 1)
    )
    return (
        f'<div class="language-python highlight"><pre><span></span><code>{lines}</code></pre></div>'
    )


def test_the_hook_marks_a_whole_step_and_only_that() -> None:
    source = (REPO / "stage1_callbacks/steps/callback.py").read_text(encoding="utf-8")
    config: dict[str, Any] = {"run_in_page_outputs": {"stage1_callbacks.steps.callback": "x"}}
    page = rendered(source) + rendered("\n".join(source.splitlines()[:20]))
    marked = run_in_page.mark_listings(page, "zh", config)
    assert marked.count('data-run="stage1_callbacks.steps.callback"') == 1
    assert marked.count('class="run-button') == 1 and "运行" in marked
    assert config["run_in_page_found"] == {"stage1_callbacks.steps.callback"}


def test_the_hook_says_why_a_thread_step_and_stage_3_run_elsewhere() -> None:
    threads = (REPO / "stage1_callbacks/steps/threads.py").read_text(encoding="utf-8")
    stage3 = (REPO / "stage3_asyncio/steps/crawl.py").read_text(encoding="utf-8")
    marked = run_in_page.mark_listings(rendered(threads) + rendered(stage3), "en", {})
    assert "data-run" not in marked
    assert "has none: run it in a terminal" in marked
    assert "Stage 3 cannot run in the page" in marked
