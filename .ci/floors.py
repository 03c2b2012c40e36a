"""Print a requirements file that pins each direct dependency to its floor.

The floor of ``aiohttp>=3.14,<4`` is 3.14: CI installs these pins over its
environment (``pip install -r FILE``) and runs the quick tests, so a floor
in pyproject.toml that is too low fails CI instead of a user's install.
Only ``[project].dependencies`` are pinned: they are what a user installs;
the test tools keep their newest versions.  Exits with an error when a
dependency has no floor (``>=``).

Run from the repository root::

    python .ci/floors.py > floors.txt && pip install -r floors.txt
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

# A requirement as pyproject.toml writes them: a name, then comma-separated
# version clauses (no extras, no markers, which this project does not use).
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*)$")


def floor_of(requirement: str) -> tuple[str, str]:
    """Return ``(name, floor)`` of a requirement.  Raises ValueError without a ``>=``."""
    match = REQUIREMENT.match(requirement)
    if match is None:
        raise ValueError(f"not a requirement: {requirement!r}")
    name, clauses = match.groups()
    for clause in clauses.split(","):
        clause = clause.strip()
        if clause.startswith(">="):
            return name, clause[2:].strip()
    raise ValueError(f"{name} has no floor (>=) in pyproject.toml: {requirement!r}")


def constraints(pyproject: Path) -> list[str]:
    """Return one ``name==floor`` line for each direct dependency of ``pyproject``."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    return ["{}=={}".format(*floor_of(requirement)) for requirement in project["dependencies"]]


def main() -> None:
    if len(sys.argv) > 1:
        sys.exit("usage: python .ci/floors.py > floors.txt")
    try:
        lines = constraints(Path("pyproject.toml"))
    except ValueError as error:
        sys.exit(f"floors.py: {error}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
