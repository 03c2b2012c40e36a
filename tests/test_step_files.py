"""What a step needs outside this repository: the reference page's table is true.

``docs/reference.md`` lists, for every step, the files it imports (directly
or through another file of the repository) and the packages to install.
The table is checked against the steps' real imports, read from their
source, and each step is run from a folder that holds exactly those files
(with empty ``__init__.py`` files, as the page says), importing nothing
from this repository.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.testsite.server import ServerThread, make_app
from stage2_generators.tests.test_server_steps import STEPS as SERVER_STEPS
from tests.test_steps import STEPS as CLIENT_STEPS

ROOT = Path(__file__).resolve().parent.parent
FIRST_PARTY = {"shared", "stage1_callbacks", "stage2_generators", "stage3_asyncio"}
SERVER = [f"stage2_generators.server.steps.{name}" for name in SERVER_STEPS]
PIP_NAMES = {"ada_url": "ada-url", "w3lib": "w3lib", "aiohttp": "aiohttp", "httptools": "httptools"}
OPTIONAL = {"selectolax"}  # The faster link parser, used when installed.
# ada-url's stand-in in the page, imported only where ada-url cannot load.
PAGE_ONLY = {"shared.web.jsurl"}
ROW = re.compile(r"^\| `(?P<step>[^`]+)` \| (?P<files>.*) \| (?P<packages>[^|]*) \|$")


def source_file(module: str) -> Path | None:
    """Return the file of a first-party module or package, or None."""
    for path in (ROOT / f"{module.replace('.', '/')}.py", ROOT / module.replace(".", "/")):
        if path.suffix == ".py" and path.is_file():
            return path
        if (path / "__init__.py").is_file():
            return path / "__init__.py"
    return None


def imported(module: str) -> set[str]:
    """Return the modules that ``module`` imports anywhere in its source."""
    path = source_file(module)
    assert path is not None, module
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:  # A submodule, or a name in the module.
                submodule = f"{node.module}.{alias.name}"
                names.add(submodule if source_file(submodule) else node.module)
    return names


def needs(step: str) -> tuple[set[str], set[str]]:
    """Return the repository files and the third-party packages ``step`` needs."""
    seen, packages, todo = set(), set(), [step]
    while todo:
        module = todo.pop()
        if module in seen or module in PAGE_ONLY:
            continue
        seen.add(module)
        for name in imported(module):
            top = name.split(".")[0]
            if top in FIRST_PARTY:
                todo.append(name)
            elif top not in sys.stdlib_module_names:
                packages.add(top)
    files = {str(source_file(module).relative_to(ROOT)) for module in seen}  # type: ignore[union-attr]
    return files, packages


def table() -> dict[str, tuple[set[str], set[str]]]:
    """Return the reference page's table: step file -> (files, packages)."""
    text = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    section = text.split("## Running a step outside this repository\n", 1)[1].split("\n## ")[0]
    rows = {}
    for line in section.splitlines():
        if row := ROW.match(line):
            files = set(re.findall(r"`([^`]+)`", row["files"]))
            packages = {p.strip() for p in row["packages"].split(",")} - {"none"}
            rows[row["step"]] = (files, packages)
    return rows


def module_path(step: str) -> str:
    return f"{step.replace('.', '/')}.py"


ALL_STEPS = CLIENT_STEPS + SERVER


def test_the_table_has_every_step_in_order() -> None:
    assert list(table()) == [module_path(step) for step in ALL_STEPS]


@pytest.mark.parametrize("step", ALL_STEPS)
def test_the_table_lists_what_the_step_imports(step: str) -> None:
    files, packages = needs(step)
    listed_files, listed_packages = table()[module_path(step)]
    assert listed_files == files - {module_path(step)}
    assert listed_packages == {PIP_NAMES[p] for p in packages - OPTIONAL}


# --- Running each step from a copy of just those files --------------------------------------


@pytest.fixture(scope="module")
def site() -> Iterator[ServerThread]:
    with ServerThread(make_app(10)) as server:
        yield server


def copy_of(step: str, folder: Path) -> None:
    """Copy the step and the files it needs into ``folder``, with empty package files."""
    files, _ = needs(step)
    for name in files:
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, target)
        for package in target.relative_to(folder).parents:
            if package != Path("."):
                (folder / package / "__init__.py").touch()


# Run the step as ``python -m`` would, then check where its modules came from.
RUNNER = """
import runpy, sys
folder, step, *args = sys.argv[1:]
sys.argv = [step, *args]
runpy.run_module(step, run_name="__main__", alter_sys=True)
first_party = {"shared", "stage1_callbacks", "stage2_generators", "stage3_asyncio"}
outside = [module.__file__ for name, module in list(sys.modules.items())
           if name.split(".")[0] in first_party
           and not str(getattr(module, "__file__", "") or folder).startswith(folder)]
assert not outside, outside
"""


@pytest.mark.slow
@pytest.mark.parametrize("step", ALL_STEPS)
def test_the_step_runs_from_a_copy_of_those_files(
    step: str, site: ServerThread, tmp_path: Path
) -> None:
    copy_of(step, tmp_path)
    args = [] if step in SERVER else [site.url]
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(tmp_path), step, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr
