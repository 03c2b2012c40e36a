"""The house: test-only code stays out of the installed packages, and the test
run has its safety nets (a per-test timeout, the slow marker)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ["shared", "stage1_callbacks", "stage2_generators", "stage3_asyncio"]
TEST_ONLY = {"tests", "pytest", "hypothesis"}


def installed_modules() -> list[Path]:
    """Return the modules pip installs: the packages, without the stages' tests."""
    return [
        path
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        if "tests" not in path.relative_to(REPO).parts
    ]


def imported_roots(path: Path) -> set[str]:
    """Return the top-level names of every module that ``path`` imports."""
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.partition(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.partition(".")[0])
    return roots


@pytest.mark.parametrize("path", installed_modules(), ids=lambda path: path.stem)
def test_installed_code_does_not_import_test_code(path: Path) -> None:
    assert not imported_roots(path) & TEST_ONLY


def test_test_servers_live_under_tests() -> None:
    assert not (REPO / "shared" / "testing.py").exists()
    assert not (REPO / "shared" / "hostile.py").exists()
    assert (REPO / "tests" / "servers.py").exists() and (REPO / "tests" / "hostile.py").exists()


def test_tls_helpers_are_in_one_place() -> None:
    """Only tests/tls.py reads the test certificates."""
    readers = [
        path.relative_to(REPO).as_posix()
        for path in REPO.glob("**/*.py")
        if ".venv" not in path.parts
        and path != Path(__file__).resolve()
        and '"certs"' in path.read_text(encoding="utf-8")
    ]
    assert readers == ["tests/tls.py"]


def test_a_hung_test_fails_on_its_own(request: pytest.FixtureRequest) -> None:
    """pytest-timeout is on, with a per-test limit from pyproject.toml."""
    assert request.config.pluginmanager.hasplugin("timeout")
    assert float(request.config.getini("timeout")) > 0


def test_the_slow_marker_is_registered(request: pytest.FixtureRequest) -> None:
    """So that ``pytest -m "not slow"`` (the quick loop, and CI on 3.12) selects."""
    markers = request.config.getini("markers")
    assert any(marker.startswith("slow:") for marker in markers)
