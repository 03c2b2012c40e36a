"""Subprocesses for the benchmark: servers that announce a port, and timed runs.

Every server and every crawl runs in a fresh interpreter started here, so
that each one's memory, threads and file descriptors are its own.  Alongside
each run this module notes how busy the whole machine was, so that the
summary can say how much of it went to processes outside the benchmark.
"""

from __future__ import annotations

import json
import os
import queue
import resource
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

PYTHON = sys.executable
ROOT = Path(__file__).resolve().parents[2]  # The repository, where shared/ lives.
TICKS = os.sysconf("SC_CLK_TCK")


def busy_seconds() -> float:
    """Return the CPU seconds all cores have spent outside idle since boot."""
    with open("/proc/stat") as stat:
        fields = [int(v) for v in stat.readline().split()[1:]]
    user, nice, system = fields[0], fields[1], fields[2]
    return (user + nice + system) / TICKS


def process_cpu(pid: int) -> float:
    """Return the user plus system CPU seconds of a running process, 0 if gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


def children_cpu() -> float:
    """Return the CPU seconds of this process's finished children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Server:
    """A server subprocess that prints ``PORT n`` and serves until stdin closes.

    Raises RuntimeError when it does not announce its port within 60 s.
    """

    def __init__(self, *module_args: str) -> None:
        self.proc = subprocess.Popen(
            [PYTHON, "-m", *module_args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
        )  # fmt: skip
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        try:
            self.port = int(self.expect("PORT", 60).split()[1])
        except RuntimeError:
            self.close()
            raise
        self.root = f"http://127.0.0.1:{self.port}/"

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.strip())
        self.lines.put(None)

    def expect(self, word: str, timeout: float) -> str:
        """Return the next output line that starts with ``word``; RuntimeError if none."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                raise RuntimeError(f"server exited before saying {word}")
            if line.startswith(word):
                return line
        raise RuntimeError(f"server did not say {word} within {timeout} s")

    def send(self, line: str) -> None:
        """Write a line to the server's standard input."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def cpu(self) -> float:
        """Return the CPU seconds the server has used so far."""
        return process_cpu(self.proc.pid)

    def get_json(self, path: str) -> Any:
        """GET ``path`` from the server and return the decoded JSON."""
        with urllib.request.urlopen(self.root + path.lstrip("/"), timeout=30) as answer:
            return json.load(answer)

    def close(self) -> None:
        """Close the server's standard input and wait for it to exit."""
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            self.proc.wait(timeout=15)
        except (subprocess.TimeoutExpired, BrokenPipeError):
            self.proc.kill()
            self.proc.wait()
        self.reader.join(timeout=15)
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def timed_run(command: list[str], timeout: float, server: Server | None = None) -> dict[str, Any]:
    """Run ``command`` to completion; return its output, wall and CPU times.

    ``others`` is the CPU (in cores) that the rest of the machine used
    meanwhile: neither this command nor ``server``.
    """
    busy0, child0 = busy_seconds(), children_cpu()
    server0 = server.cpu() if server else 0.0
    start = time.perf_counter()
    try:
        # errors="replace": wget logs URLs as the site sent them, not all UTF-8.
        done = subprocess.run(command, capture_output=True, text=True, errors="replace",
                              timeout=timeout, cwd=ROOT)  # fmt: skip
        output, error, code = done.stdout, done.stderr, done.returncode
    except subprocess.TimeoutExpired as expired:
        output, error, code = "", f"timed out after {timeout} s: {expired}", -1
    wall = time.perf_counter() - start
    cpu = children_cpu() - child0
    server_cpu = (server.cpu() - server0) if server else 0.0
    others = max(0.0, busy_seconds() - busy0 - cpu - server_cpu) / wall
    return {"stdout": output, "stderr": error, "code": code, "wall": wall,
            "cpu": cpu, "server_cpu": server_cpu, "others": others}  # fmt: skip


def last_json(text: str) -> dict[str, Any] | None:
    """Return the JSON object on the last line of ``text``, or None."""
    lines = text.strip().splitlines()
    if not lines:
        return None
    try:
        result: dict[str, Any] = json.loads(lines[-1])
        return result
    except json.JSONDecodeError:
        return None


QUIET = 0.2  # Cores the rest of the machine may use through a run that docs/bench keeps.


def other_cpu(results: Any) -> list[float]:
    """Return every figure of the CPU other processes used, from each measured run."""
    if isinstance(results, dict):
        found = [float(results["others"])] if isinstance(results.get("others"), int | float) else []
        return found + [
            x for key, value in results.items() if key != "others" for x in other_cpu(value)
        ]
    if isinstance(results, list):
        return [x for value in results for x in other_cpu(value)]
    return []


def too_busy(results: dict[str, Any]) -> str:
    """Say why the machine was too busy for docs/bench to keep these figures ("" if quiet)."""
    others = other_cpu(results)
    if not others:
        return "no run measured the CPU of the other processes"
    if max(others) >= QUIET:
        return (
            f"other processes used up to {max(others):.2f} cores during a run "
            f"(docs/bench keeps only runs under {QUIET})"
        )
    return ""
