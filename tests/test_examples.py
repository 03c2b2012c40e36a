"""Every script under docs/examples/ runs as a reader would first run it: with
no argument (it then uses the bundled test site), or with a wrong one (it then
prints a usage line); never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # Every test here runs Python in a subprocess.

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((REPO / "docs" / "examples").glob("*.py"))


def run(script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run an example from the repository root, as the docs say."""
    return subprocess.run(
        [sys.executable, str(script.relative_to(REPO)), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda path: path.name)
def test_runs_without_arguments(script: Path) -> None:
    result = run(script)
    assert result.returncode == 0, result.stderr
    assert result.stdout and "Traceback" not in result.stderr


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda path: path.name)
def test_a_wrong_argument_prints_a_usage_line(script: Path) -> None:
    result = run(script, "--no-such-option", "extra")
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1].startswith("usage: python docs/examples/")
