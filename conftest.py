"""Fixtures shared by the tests of every folder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# The acceptance suite is imported by each stage's tests, not collected:
# pytest rewrites its asserts only when told, and a failed one then says
# what it compared (the grader's hints show that line).
pytest.register_assert_rewrite(
    "tests.acceptance", "tests.hostile_acceptance", "tests.polite_acceptance",
    "tests.revisit_acceptance", "tests.sim_acceptance",
)  # fmt: skip

from tests.servers import PageServer  # noqa: E402

# Levels for the acceptance suite, and --level N: see tests/grading.py.
# --seeds N and --seed K for the simulated tests: see tests/seeds.py.
pytest_plugins = ["tests.grading", "tests.seeds"]


@pytest.fixture
def pages() -> Iterator[PageServer]:
    """A running server that a test adds pages to."""
    with PageServer() as server:
        yield server


@pytest.fixture
def sigint() -> Iterator[None]:
    """Let Ctrl-C work in this test, even when pytest was started with SIGINT ignored.

    A shell starts a background job (``cmd &``, or CI with no terminal) with
    SIGINT ignored, and every child inherits that: a crawl the test starts
    would never see the Ctrl-C the test sends.  Python's own handler, set
    here for the test, raises KeyboardInterrupt in this process and leaves
    SIGINT at its default in the children it starts.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


BUILD_TIMEOUT = 300  # Seconds the docs build may take: it runs every command the pages show.


# First: pytest-xdist notes each test's group in its id in a hook of its own,
# which must see the marks this one adds.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Send every test of the built docs site to one pytest-xdist worker, with time to build it.

    ``built_site`` is built once per process; with ``-n auto`` and
    ``--dist loadgroup`` (in pyproject.toml), the tests that need it share
    one worker, so the site is built once instead of once per worker.  The
    first of them builds it, which takes longer than the per-test limit on
    a busy machine: their limit leaves room for the build's own.
    """
    for item in items:
        if "built_site" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("docs_site"))
            item.add_marker(pytest.mark.timeout(BUILD_TIMEOUT + 60))


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The documentation site in both languages, built once per test run with --strict.

    The build fails the tests that use it on any warning: a snippet that
    does not resolve, a broken link or anchor, a hook command that fails.
    """
    for module in ("material", "mkdocs_static_i18n", "jieba"):
        pytest.importorskip(module, reason="needs the docs extras")
    site = tmp_path_factory.mktemp("docs") / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # The end-of-life banner.
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=Path(__file__).parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    return site
