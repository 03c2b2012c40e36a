"""Ctrl-C in the middle of a crawl: the report of what was done, and the JSON.

Each stage's ``run`` closes everything on KeyboardInterrupt and re-raises;
the ``crawl`` command then prints the report and writes the JSON Lines file
of every URL recorded so far, and exits with 130.  The test runs the real
command in a subprocess, lets it crawl a slow site for a moment, and sends
it SIGINT, as a terminal would.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from shared.cli.main import STAGES
from shared.testsite.server import COUNTERS, ServerThread, make_app

pytestmark = pytest.mark.slow  # Every test here runs Python in a subprocess.

MAX_TASKS = 2
STARTED = 6  # Requests the site must have seen before the interrupt.


def wait_until(condition: Callable[[], bool], deadline: float, what: str) -> None:
    """Poll ``condition`` until it is true; fail the test after ``deadline`` seconds."""
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting for {what}")
        threading.Event().wait(0.02)


@pytest.mark.parametrize("stage", list(STAGES))
@pytest.mark.usefixtures("sigint")
def test_sigint_prints_the_report_and_writes_the_json(stage: str, tmp_path: Path) -> None:
    json_path = tmp_path / "crawl.jsonl"
    with ServerThread(make_app(300, latency=0.2)) as site:
        requests = site.app[COUNTERS].requests
        command = [sys.executable, "-m", "shared.cli", "--stage", stage, site.url]
        command += ["--json", str(json_path), "--max_tasks", str(MAX_TASKS), "-q"]
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            # With at most MAX_TASKS in flight, page request number STARTED
            # means that at least STARTED - MAX_TASKS fetches were done and
            # recorded (robots.txt, fetched first, is no page).
            def pages_requested() -> int:
                return sum(requests.values()) - requests["/robots.txt"]

            wait_until(lambda: pages_requested() >= STARTED, 30, "the crawl to start")
            process.send_signal(signal.SIGINT)
            stdout, stderr = process.communicate(timeout=30)
        finally:
            process.kill()
            process.wait()
    assert process.returncode == 130, stderr
    assert "Interrupted" in stderr
    # Stage 2 printed one of these when its task group passed the interrupt on.
    assert "never retrieved" not in stderr and "destroyed but it is pending" not in stderr, stderr
    finished = re.search(r"^Finished (\d+) urls in ", stdout, re.M)
    assert finished, stdout
    done = int(finished.group(1))
    assert done >= STARTED - MAX_TASKS
    todo = re.search(r"^Todo: (\d+)$", stdout, re.M)
    assert todo and int(todo.group(1)) > 0, "the crawl was not interrupted"
    records = [json.loads(line) for line in json_path.read_text().splitlines()]
    assert len(records) == done
    assert len({record["url"] for record in records}) == done
    for record in records:
        assert re.search(f"^{re.escape(record['url'])} ", stdout, re.M), record["url"]
