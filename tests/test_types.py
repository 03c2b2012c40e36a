"""The type hints hold: mypy, configured in pyproject.toml ([tool.mypy]), finds
no error (strict on shared/ and the stages, lighter on the tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.timeout(600)  # A first run, with no cache, checks every file.
def test_mypy_finds_no_error() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy"], capture_output=True, text=True, cwd=REPO, timeout=600
    )
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr
    assert result.stdout.startswith("Success: no issues found")
