"""``crawl-new NAME --like STAGE``: start a crawler of one's own, graded like the stages.

It makes a package ``NAME`` in the current directory (the root of this
repository, where the acceptance suite is): the skeleton of the chosen
stage (``shared/cli/skeletons/``), the two entry points the contract asks for,
and a ``tests/test_acceptance.py`` that subclasses the acceptance suite
exactly as each stage's does.  Then ``pytest NAME`` grades it level by
level (tests/grading.py, docs/build-your-own.md).

The test class names the shape (``shape = "callbacks"``), outside
``crawler.py``, which a reader may replace whole: the grader's hints point
into the chapters of that shape.

A name is refused, with one line and exit status 2, when it is no Python
identifier or a keyword, when a file or folder of that name exists, or when
the package would shadow one of ours (a stage, ``shared``, ``tests``), a
module of the standard library or an installed one.  So is a current
directory without the acceptance suite: the package imports it from
``tests``, so pytest grades it from the repository's root only.
"""

from __future__ import annotations

import argparse
import importlib.util
import keyword
import sys
from pathlib import Path

SHAPES = ("callbacks", "generators", "asyncio")  # The stages a skeleton can follow.
OURS = ("stage1_callbacks", "stage2_generators", "stage3_asyncio", "shared", "tests")
SUITE = Path("tests") / "acceptance.py"  # Where the acceptance suite is, from the root.
# The checkout this command runs from, when it has the suite (an editable install).
HOME = Path(__file__).resolve().parents[2]
CHECKOUT = f" ({HOME})" if (HOME / SUITE).is_file() else ""

INIT = '''"""{name}: a crawler of my own, graded by the acceptance suite (pytest {name})."""

from {name}.crawler import Crawler, crawl, run

__all__ = ["Crawler", "crawl", "run"]
'''
TESTS_INIT = '"""The tests of {name}."""\n'
ACCEPTANCE = '''"""{name} against the crawler contract: the shared acceptance suite."""

import {name}
from tests.acceptance import AcceptanceTests


class TestAcceptance(AcceptanceTests):
    stage = {name}
    shape = "{shape}"
'''


def refusal(name: str, root: Path) -> str | None:
    """Return why ``name`` cannot be a new package in ``root``, or None when it can."""
    if keyword.iskeyword(name):
        return f"{name!r} is a Python keyword, which cannot name a package"
    if not name.isidentifier():
        return f"{name!r} is not a valid Python package name (letters, digits, _)"
    if name in OURS:
        return f"{name!r} would shadow this repository's own package {name}"
    if (root / name).exists() or (root / f"{name}.py").exists():
        return f"{name!r} exists already in {root}"
    if name in sys.stdlib_module_names or importlib.util.find_spec(name) is not None:
        return f"{name!r} would shadow the module {name} that Python already imports"
    if not (root / SUITE).is_file():
        return (
            f"{root} has no {SUITE.as_posix()}: run crawl-new from the repository's root{CHECKOUT}"
        )
    return None


def skeleton(shape: str) -> str:
    """Return the text of the skeleton in the shape of ``shape``."""
    return (Path(__file__).parent / "skeletons" / f"{shape}.py").read_text(encoding="utf-8")


def make_package(name: str, shape: str, root: Path) -> list[Path]:
    """Write the package ``name`` in ``root``, shaped like ``shape``; return its files."""
    files = {
        root / name / "__init__.py": INIT.format(name=name),
        root / name / "crawler.py": skeleton(shape),
        root / name / "tests" / "__init__.py": TESTS_INIT.format(name=name),
        root / name / "tests" / "test_acceptance.py": ACCEPTANCE.format(name=name, shape=shape),
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(files)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Read the command line; argparse exits with status 2 on a usage error."""
    parser = argparse.ArgumentParser(
        prog="crawl-new",
        description="Make a package for a crawler of your own, graded by the acceptance suite.",
    )
    parser.add_argument("name", help="the package to make, in the current directory")
    parser.add_argument(
        "--like", choices=SHAPES, default="asyncio", help="the stage whose shape to start from"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Make the package; return the exit status (2 when the name is refused)."""
    args = parse_args(argv)
    root = Path.cwd()
    why = refusal(args.name, root)
    if why is not None:
        print(f"crawl-new: {why}", file=sys.stderr)
        return 2
    for path in make_package(args.name, args.like, root):
        print(f"made {path.relative_to(root).as_posix()}")
    print(f"next: pytest {args.name} --level 1")
    return 0


if __name__ == "__main__":
    sys.exit(main())
