"""An mkdocs hook that shows how many of CPython's asyncio tests stage 2 passes.

A line ``<!-- cpython-asyncio-tests -->`` in a page is replaced by one line
per module of CPython's ``test.test_asyncio`` that
``stage2_generators/tests/test_cpython_asyncio.py`` runs against stage 2:
"stage 2 passes N of the M CPython asyncio tests that apply to what it
implements", with the expected failures and the tests that do not apply.
The numbers are never typed: the build runs that test module (pytest, once
per build, on the Python that builds the site) and counts its JUnit XML
report.  A Chinese page (``NAME.zh.md``) gets the same numbers in Chinese.
A test that fails fails the build.  Where the Python that builds the site
has no CPython test package (some Linux distributions ship it apart, as
``libpython3.X-testsuite``), the page says so instead of giving a count,
except under CI (``CI=true``), where that fails the build too.
"""

from __future__ import annotations

import collections
import importlib.util
import os
import platform
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parents[2]
MARKER = "<!-- cpython-asyncio-tests -->"
TEST_MODULE = "stage2_generators/tests/test_cpython_asyncio.py"
COUNTS = "cpython_asyncio_counts"  # The configuration key that keeps one build's counts.
OUTCOMES = ("passed", "xfailed", "not_applicable")
LINES = {
    "en": (
        "On Python {python}, which built this page:\n\n",
        "The Python that built this page ({python}) has no CPython test package "
        "(`test.test_asyncio`), so the count was not taken: build the site with a "
        "Python that has it to see the figures.\n",
        "- `{module}`: stage 2 passes {passed} of the {applies} CPython asyncio tests "
        "that apply to what it implements (expected failures: {xfailed}; "
        "not applicable: {not_applicable})\n",
    ),
    "zh": (
        "用构建本页的 Python {python} 运行：\n\n",
        "构建本页的 Python（{python}）没有 CPython 的测试包（`test.test_asyncio`），"
        "所以这里没有计数：换一个带测试包的 Python 构建本站，就能看到这些数字。\n",
        "- `{module}`：在适用于阶段 2 所实现部分的 {applies} 个 CPython asyncio 测试中，"
        "阶段 2 通过 {passed} 个（预期失败 {xfailed} 个；不适用 {not_applicable} 个）\n",
    ),
}


def count() -> dict[str, collections.Counter[str]] | None:
    """Run the test module and count each CPython module's outcomes; None without a test package.

    Raises PluginError when a test fails or the module cannot run.
    """
    if (
        importlib.util.find_spec("test") is None
        or importlib.util.find_spec("test.test_asyncio") is None
    ):
        if os.environ.get("CI") == "true":
            raise PluginError("CPython's test package (test.test_asyncio) is not installed")
        return None
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.xml"
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        command += ["-o", "addopts=", f"--junitxml={report}", TEST_MODULE]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not report.exists():
            raise PluginError(f"{TEST_MODULE} failed:\n{done.stdout[-3000:]}{done.stderr}")
        cases = ET.parse(report).getroot().iter("testcase")
        counts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        for case in cases:
            module, _, _ = case.get("classname", "").rpartition(".")[2].partition("__")
            if module.startswith("test_") and "__" in case.get("classname", ""):
                counts[module][_outcome(case)] += 1
    if not counts:
        raise PluginError(f"{TEST_MODULE} ran no CPython test (no test package?)")
    return counts


def _outcome(case: ET.Element) -> str:
    """Return what became of one test case of the report."""
    skipped = case.find("skipped")
    if skipped is None:
        return "passed"
    if skipped.get("type") == "pytest.xfail":
        return "xfailed"
    return "not_applicable"


def render(counts: dict[str, collections.Counter[str]] | None, language: str) -> str:
    """Return the Markdown lines for ``counts`` in ``language`` ("en" or "zh")."""
    head, missing, line = LINES[language]
    if counts is None:
        return missing.format(python=platform.python_version())
    text = head.format(python=platform.python_version())
    for module, outcome in counts.items():
        applies = outcome["passed"] + outcome["xfailed"]
        text += line.format(module=module, applies=applies, **{k: outcome[k] for k in OUTCOMES})
    return text


def on_page_markdown(markdown: str, page: object, config: dict, **kwargs: object) -> str:
    """Replace the marker with the counts, running the tests once per build."""
    if MARKER not in markdown:
        return markdown
    if COUNTS not in config:
        config[COUNTS] = count()
    src = page.file.src_uri  # type: ignore[attr-defined]
    return markdown.replace(
        MARKER, render(config[COUNTS], "zh" if src.endswith(".zh.md") else "en")
    )
