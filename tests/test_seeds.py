"""The --seeds plugin (tests/seeds.py): each seed a run, and the command that replays a failure."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.seeds import SEEDS, pytest_generate_tests, replay_command, seed_of, seeds_asked

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("nodeid", "seed"),
    [
        ("a.py::test_x[seed12]", 12),
        ("a.py::T::test_x[5-seed3]", 3),
        ("a.py::test_x[seedling]", None),
        ("a.py::test_x", None),
        ("a.py::test_x[12]", None),
    ],
)
def test_seed_of_a_test_id(nodeid: str, seed: int | None) -> None:
    assert seed_of(nodeid) == seed


def test_replay_command_quotes_the_test_id() -> None:
    command = replay_command(7, "a.py::test_x[seed7]")
    assert command == "python -m pytest 'a.py::test_x[seed7]' --seed 7"


def run_pytest(tmp_path: Path, *options: str) -> str:
    """Run pytest with the plugin on the one test in ``tmp_path``; return its output."""
    command = [sys.executable, "-m", "pytest", str(tmp_path), "-p", "tests.seeds"]
    command += ["-p", "no:cacheprovider", *options]
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}  # For tests.seeds.
    done = subprocess.run(
        command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120
    )
    return done.stdout


@pytest.mark.slow
def test_seeds_end_with_the_first_failing_seed_and_its_replay(tmp_path: Path) -> None:
    (tmp_path / "test_race.py").write_text(
        "def test_race(seed):\n    assert seed % 4 != 3, 'lost the race'\n"
    )
    out = run_pytest(tmp_path, "--seeds", "10")
    assert "2 failed, 8 passed" in out
    assert "2 of 10 seeds failed; the first is seed 3." in out
    replay = out.split("Replay it with: ")[1].splitlines()[0]
    assert replay == "python -m pytest 'test_race.py::test_race[seed3]' --seed 3"
    again = run_pytest(tmp_path, "test_race.py::test_race[seed3]", "--seed", "3")
    assert "1 failed" in again and "lost the race" in again
    assert "1 of 1 seeds failed; the first is seed 3." in again


class Options:
    """The part of a pytest config that seeds_asked reads."""

    def __init__(self, seeds: int | None, one_seed: int | None) -> None:
        self.options = {"seeds": seeds, "one_seed": one_seed}

    def getoption(self, name: str) -> int | None:
        return self.options[name]


@pytest.mark.parametrize(
    ("seeds", "one_seed", "asked"), [(None, None, [0]), (3, None, [0, 1, 2]), (None, 9, [9])]
)
def test_seeds_asked(seeds: int | None, one_seed: int | None, asked: list[int]) -> None:
    assert seeds_asked(Options(seeds, one_seed)) == asked  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("seeds", "one_seed", "message"),
    [(0, None, "--seeds needs at least 1 seed"), (None, -1, "at least 0"), (2, 1, "not both")],
)
def test_bad_seed_options_are_usage_errors(
    seeds: int | None, one_seed: int | None, message: str
) -> None:
    with pytest.raises(pytest.UsageError, match=message):
        seeds_asked(Options(seeds, one_seed))  # type: ignore[arg-type]


class Metafunc:
    """The part of a pytest Metafunc that pytest_generate_tests reads, noting what it is told."""

    def __init__(self, cls: type | None, seeds: int | None = None) -> None:
        self.cls = cls
        self.fixturenames = ["seed"]
        self.config = Config(seeds)
        self.definition = SimpleNamespace(iter_markers=lambda name: [])
        self.parametrized: list[int] = []

    def parametrize(self, name: str, values: list[int], ids: list[str]) -> None:
        assert name == "seed" and ids == [f"seed{value}" for value in values]
        self.parametrized = values


class Config(Options):
    """A pytest config with the seeds asked for in its stash."""

    def __init__(self, seeds: int | None) -> None:
        super().__init__(seeds, None)
        self.stash = {SEEDS: seeds_asked(self)}  # type: ignore[arg-type]


class OwnSeeds:
    seeds = (7,)


@pytest.mark.parametrize(
    ("cls", "seeds", "run"), [(None, None, [0]), (OwnSeeds, None, [7]), (OwnSeeds, 2, [0, 1])]
)
def test_a_class_names_its_seeds_unless_the_command_line_does(
    cls: type | None, seeds: int | None, run: list[int]
) -> None:
    metafunc = Metafunc(cls, seeds)
    pytest_generate_tests(metafunc)  # type: ignore[arg-type]
    assert metafunc.parametrized == run
