"""What every exercise's test shares: the file it checks.

Each exercise is a folder with ``start.py`` (the reader's file), a
``solution.py`` and a test.  The test checks ``start.py`` unless
``--exercise`` names another file of the folder (or a path)::

    pytest docs/exercises/callbacks/per_host_limit
    pytest docs/exercises/callbacks/per_host_limit --exercise solution.py
"""

from __future__ import annotations

import importlib.util
import itertools
from types import ModuleType

import pytest

LOADED = itertools.count()  # A fresh module name for each file loaded.


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--exercise",
        default="start.py",
        help="the file each exercise's test checks (default: start.py)",
    )


@pytest.fixture
def exercise(request: pytest.FixtureRequest) -> ModuleType:
    """Return the module the reader asked for, loaded from its file."""
    path = request.path.parent / request.config.getoption("--exercise")
    if not path.is_file():
        pytest.fail(f"no file {path}: --exercise names a file of the folder")
    name = f"exercise_{path.parent.name}_{path.stem}_{next(LOADED)}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
