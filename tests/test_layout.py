"""The house: test-only code stays out of the installed packages, the test
run has its safety nets (a per-test timeout, the slow marker), and every
direct dependency has a floor that CI installs and tests."""

from __future__ import annotations

import ast
import importlib.util
import os
import tomllib
from pathlib import Path
from typing import Any

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
    """So that ``pytest -m "not slow"`` (the quick loop) selects."""
    markers = request.config.getini("markers")
    assert any(marker.startswith("slow:") for marker in markers)


def test_the_docs_site_tests_share_one_xdist_worker(request: pytest.FixtureRequest) -> None:
    """With ``-n auto``, the tests of the built site go to one worker: one build, not one each."""
    assert request.config.pluginmanager.hasplugin("xdist")
    assert "--dist loadgroup" in " ".join(request.config.getini("addopts"))
    on_a_worker = "PYTEST_XDIST_WORKER" in os.environ
    for item in request.session.items:  # The tests of this run (all, or those selected).
        if "built_site" in getattr(item, "fixturenames", ()):
            group = item.get_closest_marker("xdist_group")
            assert group is not None and group.args == ("docs_site",), item.nodeid
            # The mark works only if xdist could note the group in the test's id.
            assert not on_a_worker or item.nodeid.endswith("@docs_site"), item.nodeid
            limit = item.get_closest_marker("timeout")  # The build's time, and the test's.
            assert limit is not None and limit.args[0] > float(request.config.getini("timeout"))


# --- Layers: shared/ in layers, below every stage, and no import circle ---------------------

STAGES = {"stage1_callbacks", "stage2_generators", "stage3_asyncio"}
# The layers of shared/, lowest first (shared/__init__.py says what each
# holds): a module may import its own layer and those before it, never one after.
LAYERS = ["web", "record", "crawl", "steps", "testsite", "sim", "page", "cli", "bench"]
# The parts of shared/ that choose among the stages by name: the command line and the bench.
MAY_IMPORT_STAGES = {"cli", "bench"}
# Stage 2's core imports itself in a circle, as asyncio's does (futures,
# tasks and the loop each need the others): the one circle allowed.
STAGE2_CORE = {f"stage2_generators.{name}" for name in ("events", "futures", "loop", "tasks")}


def imported_modules(path: Path) -> set[str]:
    """Return the full dotted names of the modules that ``path`` imports, anywhere in it."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def layer_of(name: str) -> str:
    """Return the layer of a module of shared/ named ``shared.LAYER...``; the root is record's."""
    parts = name.split(".")
    # ``from shared import FetchStatistic``: the root re-exports the records.
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "record"


def shared_modules() -> list[Path]:
    """Return every module of shared/ but its root, which only re-exports the records."""
    return [
        path
        for path in sorted((REPO / "shared").rglob("*.py"))
        if path.parent != REPO / "shared" or path.stem != "__init__"
    ]


def module_name(path: Path, root: Path = REPO) -> str:
    """Return the dotted name of the module at ``path`` (a package's, for ``__init__.py``)."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@pytest.mark.parametrize("path", shared_modules(), ids=module_name)
def test_shared_imports_only_its_layer_and_lower_ones(path: Path) -> None:
    """A layer of shared/ uses the layers below it, never one above."""
    own = LAYERS.index(layer_of(module_name(path)))
    higher = {
        name
        for name in imported_modules(path)
        if name.partition(".")[0] == "shared" and LAYERS.index(layer_of(name)) > own
    }
    assert not higher


@pytest.mark.parametrize("path", shared_modules(), ids=module_name)
def test_shared_imports_no_stage(path: Path) -> None:
    """Only the command line and the benchmark choose a stage; the rest is below them all."""
    if layer_of(module_name(path)) in MAY_IMPORT_STAGES:
        return
    assert not {name.partition(".")[0] for name in imported_modules(path)} & STAGES


def test_the_layer_test_sees_a_stage_import(tmp_path: Path) -> None:
    """The check above finds an import inside a function, as site.py once had."""
    module = tmp_path / "late.py"
    module.write_text("def serve():\n    from stage2_generators.server import tcp\n")
    assert "stage2_generators.server" in imported_modules(module)


def modules_imported(path: Path, modules: set[str]) -> set[str]:
    """Return which of ``modules`` the file at ``path`` imports by name, anywhere in it.

    ``from a.b import c`` imports the module a.b.c when there is one, else a.b.
    """
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                names.add(submodule if submodule in modules else node.module)
    return names & modules


def import_graph(root: Path = REPO) -> dict[str, set[str]]:
    """Return, for each module of shared/ and the stages (not tests), the modules it imports."""
    paths = {
        module_name(path, root): path
        for package in PACKAGES
        for path in sorted((root / package).rglob("*.py"))
        if "tests" not in path.relative_to(root).parts
    }
    return {name: modules_imported(path, set(paths)) - {name} for name, path in paths.items()}


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """Return the groups of modules that import each other in a circle (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        for other in graph[name]:
            if other not in index:
                visit(other)
                low[name] = min(low[name], low[other])
            elif other in stack:
                low[name] = min(low[name], index[other])
        if low[name] == index[name]:
            group = {stack.pop()}
            while name not in group:
                group.add(stack.pop())
            if len(group) > 1:
                found.append(group)

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return found


def test_no_import_circle_but_stage_2_core() -> None:
    """The house drawn from the imports has one circle only: stage 2's core, as asyncio's."""
    assert [group for group in circles(import_graph()) if not group <= STAGE2_CORE] == []


def test_the_circle_test_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]


# --- The steps: each path imports its own earlier steps and shared/, nothing else -------------

# Each path of steps, and what else its steps may import besides themselves and shared/.
STAGE1_LOOP = ["stage1_callbacks.steps.callback", "stage1_callbacks.steps.nonblocking"]
STAGE2_LIBRARY = [f"stage2_generators.{name}" for name in ("events", "futures", "tasks", "loop")]
STEPS = {
    "stage1_callbacks.steps": [],
    "stage2_generators.steps": STAGE1_LOOP,  # The lesson: the loop is stage 1's, unchanged.
    "stage3_asyncio.steps": [],
    # The server chapter's steps run on stage 2's finished library.
    "stage2_generators.server.steps": [*STAGE2_LIBRARY, "stage2_generators.locks"],
}
# Stage 2's last two steps come after the chapter's part on cancellation,
# and run on the finished library, whose Task can be cancelled.
ON_STAGE2_LIBRARY = {"stage2_generators.steps.taskgroup", "stage2_generators.steps.timeout"}


def step_modules() -> list[tuple[str, Path]]:
    """Return (package, path) for every step module of every path."""
    return [
        (package, path)
        for package in STEPS
        for path in sorted((REPO / package.replace(".", "/")).glob("*.py"))
        if path.name != "__init__.py"
    ]


@pytest.mark.parametrize(
    ("package", "path"), step_modules(), ids=lambda value: getattr(value, "stem", value)
)
def test_a_step_imports_its_own_path_and_shared_only(package: str, path: Path) -> None:
    """So a reader typing the steps outside the repository knows what to copy.

    The exceptions are lessons: stage 2's first steps run on stage 1's
    selector loop, and the server's steps and stage 2's task group and
    timeout steps on stage 2's finished library.
    """
    allowed = (package, "shared", *STEPS[package])
    if f"{package}.{path.stem}" in ON_STAGE2_LIBRARY:
        allowed += tuple(STAGE2_LIBRARY)
    strays = {
        name
        for name in imported_modules(path)
        if name.partition(".")[0] in STAGES
        and not any(name == prefix or name.startswith(prefix + ".") for prefix in allowed)
    }
    assert not strays


def test_the_steps_plumbing_is_in_one_place() -> None:
    """The helpers no chapter teaches are defined once, in shared/steps.py."""
    helpers = {
        "url_from_argv",
        "http_request",
        "status_line",
        "some_pages",
        "links_to_follow",
        "parse",
    }
    defined = {
        node.name: path.relative_to(REPO).as_posix()
        for _, path in step_modules()
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.FunctionDef) and node.name in helpers
    }
    assert defined == {}
    shared_steps = ast.parse((REPO / "shared" / "steps.py").read_text(encoding="utf-8"))
    assert helpers <= {node.name for node in shared_steps.body if isinstance(node, ast.FunctionDef)}


# --- Records are built with keyword arguments --------------------------------------------------

RECORDS = {"FetchStatistic", "Earlier"}  # The named tuples a crawl records.


def positional_records(path: Path) -> list[int]:
    """Return the lines of ``path`` where a record is built with positional arguments."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and node.args:
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            if name in RECORDS and not isinstance(node.args[0], ast.Starred):
                lines.append(node.lineno)
    return lines


def test_records_are_built_with_keyword_arguments() -> None:
    """``FetchStatistic(url=..., status=...)``, so a reader sees which field is which.

    Only tests/test_stats.py builds one by position: that nine fields in the
    original crawler's order still do is part of the contract.
    """
    places = {
        path.relative_to(REPO).as_posix(): positional_records(path)
        for path in sorted(REPO.glob("**/*.py"))
        if ".venv" not in path.parts and path.name != "test_stats.py"
    }
    assert {path: lines for path, lines in places.items() if lines} == {}


# --- Dependency floors ------------------------------------------------------------


def load_floors() -> Any:
    """Import .ci/floors.py, which makes CI's constraints file of floors."""
    spec = importlib.util.spec_from_file_location("ci_floors", REPO / ".ci" / "floors.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def direct_dependencies() -> list[str]:
    """Return the requirements of pyproject.toml's [project].dependencies."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return list(pyproject["project"]["dependencies"])


@pytest.mark.parametrize("requirement", direct_dependencies())
def test_every_direct_dependency_has_a_floor(requirement: str) -> None:
    name, floor = load_floors().floor_of(requirement)
    assert floor, requirement
    if name == "aiohttp":  # Stage 3 leans on its private names (keepalive.py).
        assert "<4" in requirement.replace(" ", "")


def test_the_floors_file_pins_every_direct_dependency_to_its_floor() -> None:
    lines = load_floors().constraints(REPO / "pyproject.toml")
    names = [requirement.partition(">=")[0].strip() for requirement in direct_dependencies()]
    assert [line.partition("==")[0] for line in lines] == names
    assert all(line.partition("==")[2] for line in lines)


def test_a_requirement_without_a_floor_is_refused() -> None:
    with pytest.raises(ValueError, match="no floor"):
        load_floors().floor_of("aiohttp<4")


def test_ci_runs_the_quick_tests_at_the_floors() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    step = ci[ci.index(".ci/floors.py >") :]
    assert '.venv/bin/pip install -q -r "$floors"' in step
    assert '-m "not slow"' in step
