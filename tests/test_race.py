"""Races found by seeds: the simulation chapter's example, and the broken crawlers that race.

The example (docs/examples/racy_robots.py) passes seed 0 and fails under
a later seed.  Each broken crawler of tests/broken that holds a race
(``RACES``) fails its simulated test under the first seed that its
hundred-seed run found, and replays alike: the same seed, the same
requests heard at the same times, the same failure.  Seed 0 passes that
test where the run found the race only under later seeds.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from shared.sim import World
from tests.broken import Race

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "racy_robots.py"
BROKEN = sorted(path.stem for path in (ROOT / "tests" / "broken").glob("[a-z]*.py"))
RACY = [
    (name, shape, race)
    for name in BROKEN
    for shape, race in getattr(importlib.import_module(f"tests.broken.{name}"), "RACES", {}).items()
]


@pytest.fixture(scope="module")
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("racy_robots", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def heard(world: World) -> list[tuple[Any, ...]]:
    """Return what the world's servers heard: time, server, target, fate, when answered."""
    return [(h.time, h.server, h.target, h.fate, h.answered) for h in world.network.heard]


@pytest.mark.slow
def test_seeds_find_the_race_that_seed_0_hides(example: ModuleType) -> None:
    assert not example.asked_twice(0)
    failing = next((seed for seed in range(100) if example.asked_twice(seed)), None)
    assert failing is not None, "no seed of 100 broke the racy crawler"
    # Replayed, the failing seed does the very same requests at the very same times.
    assert heard(example.crawl(failing)[0]) == heard(example.crawl(failing)[0])
    # Stage 3's own robots_of, one shared task per host, passes the same seed.
    assert not example.asked_twice(failing, fixed=True)


def run_race(name: str, shape: str, test: str, seed: int) -> tuple[str | None, list[Any]]:
    """Run one simulated test of a broken crawler under ``seed``.

    Return its failure's message (None if it passed) and what the servers
    heard in each world it crawled.
    """
    cls = getattr(importlib.import_module(f"tests.broken.{name}"), f"Test{shape.capitalize()}")
    worlds: list[World] = []

    class Watched(cls):  # type: ignore[misc,valid-type]
        def simulate(self, world: World, roots: list[str], **options: Any) -> Any:
            worlds.append(world)
            return super().simulate(world, roots, **options)

    try:
        getattr(Watched(), test)(seed=seed)
    except AssertionError as error:
        return str(error), [heard(world) for world in worlds]
    return None, [heard(world) for world in worlds]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "shape", "race"), RACY, ids=[f"{n}-{s}" for n, s, _ in RACY])
def test_a_race_fails_under_its_first_seed_and_replays_alike(
    name: str, shape: str, race: Race
) -> None:
    failed, worlds = run_race(name, shape, race.test, race.first)
    assert failed is not None, f"{name} ({shape}) passed {race.test} under seed {race.first}"
    assert run_race(name, shape, race.test, race.first) == (failed, worlds)
    if race.first > 0:  # Hidden from seed 0, as the hundred seeds found.
        assert run_race(name, shape, race.test, 0)[0] is None, f"{name} ({shape}) failed seed 0"


def test_each_race_names_a_simulated_test_and_a_share_of_seeds() -> None:
    assert len(RACY) >= 8 and {shape for _, shape, _ in RACY} == {
        "callbacks",
        "generators",
        "asyncio",
    }
    for name, shape, race in RACY:
        module = importlib.import_module(f"tests.broken.{name}")
        cls = getattr(module, f"Test{shape.capitalize()}")
        assert "seed" in getattr(cls, race.test).__code__.co_varnames, (name, race.test)
        assert 0 <= race.first < 100 and 0 < race.failing <= 100 - race.first, (name, race)
        assert getattr(cls, "seeds", (0,)) == race.seeds, (name, shape)
