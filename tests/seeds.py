"""``pytest --seeds N``: the simulated acceptance tests under N seeds, and how to replay a failure.

A simulated test (``tests/sim_acceptance.py``) takes the ``seed`` fixture,
the seed of the world it crawls in.  By default it runs once, with seed 0
(the loop's own first-in, first-out order).  ``--seeds N`` runs it under
seeds 0 to N-1, each one a legal order of what happens at once and a draw
of each connection's latency; ``--seed K`` runs it under seed K alone.  A
race that one order in a hundred shows then fails under some seed, and the
run ends by naming the first seed that failed and the command that runs
that one test under it again: the same seed gives the same run.

A test class may name the seeds its tests run under when the command line
names none (``seeds = (7,)``): the broken crawlers of tests/broken whose
race seed 0 misses are graded under the first seed that finds it.  Given
``--seeds`` or ``--seed``, every class runs under those.

The root conftest.py registers this plugin beside ``tests.grading``.
"""

from __future__ import annotations

import shlex

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("seeds", "simulated runs under seeds")
    group.addoption(
        "--seeds", type=int, metavar="N",
        help="run the simulated acceptance tests under seeds 0 to N-1",
    )  # fmt: skip
    group.addoption(
        "--seed", type=int, metavar="K", dest="one_seed",
        help="run the simulated acceptance tests under seed K only (to replay a failure)",
    )  # fmt: skip


def seeds_asked(config: pytest.Config) -> list[int]:
    """Return the seeds the command line asks for: [0] by default.

    Raises pytest.UsageError for a count below 1 or a negative seed.
    """
    count, one = config.getoption("seeds"), config.getoption("one_seed")
    if count is not None and one is not None:
        raise pytest.UsageError("give --seeds N or --seed K, not both")
    if count is not None:
        if count < 1:
            raise pytest.UsageError(f"--seeds needs at least 1 seed, not {count}")
        return list(range(count))
    if one is not None:
        if one < 0:
            raise pytest.UsageError(f"a seed is a whole number of at least 0, not {one}")
        return [one]
    return [0]


def pytest_configure(config: pytest.Config) -> None:
    config.stash[SEEDS] = seeds_asked(config)
    config.pluginmanager.register(FailedSeeds(), "failed-seeds")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run each test that takes the ``seed`` fixture once per seed asked for.

    A test that parametrizes ``seed`` itself keeps its own seeds; a class
    that names its ``seeds`` runs under them unless the command line chose.
    """
    if "seed" in metafunc.fixturenames and not parametrizes_seed(metafunc):
        seeds = metafunc.config.stash[SEEDS]
        own = getattr(metafunc.cls, "seeds", None)
        if own is not None and not chosen(metafunc.config):
            seeds = list(own)
        metafunc.parametrize("seed", seeds, ids=[f"seed{seed}" for seed in seeds])


def chosen(config: pytest.Config) -> bool:
    """Tell whether the command line chose the seeds (--seeds or --seed)."""
    return config.getoption("seeds") is not None or config.getoption("one_seed") is not None


def parametrizes_seed(metafunc: pytest.Metafunc) -> bool:
    """Tell whether the test's own parametrize marks name ``seed``."""
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0]
        if isinstance(names, str):
            names = [name.strip() for name in names.split(",")]
        if "seed" in names:
            return True
    return False


class FailedSeeds:
    """The plugin's record of this run: each failed run of a seeded test, with its seed."""

    def __init__(self) -> None:
        self.failed: list[tuple[int, str]] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Note a failed run of a seeded test."""
        nodeid = without_group(report.nodeid)
        seed = seed_of(nodeid)
        if report.failed and seed is not None:
            self.failed.append((seed, nodeid))

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """End the run with the first seed that failed, and the command that replays it."""
        if not self.failed:
            return
        seeds = terminalreporter.config.stash[SEEDS]
        seed, nodeid = min(self.failed)
        failed_seeds = sorted({seed for seed, _ in self.failed})
        terminalreporter.section("seeds")
        terminalreporter.write_line(
            f"{len(failed_seeds)} of {len(seeds)} seeds failed; the first is seed {seed}."
        )
        terminalreporter.write_line(f"Replay it with: {replay_command(seed, nodeid)}")


def without_group(nodeid: str) -> str:
    """Return a test id without the ``@GROUP`` that pytest-xdist adds to it under loadgroup.

    A worker reports ``test_x[seed3]@grade-mine``: the id a command line
    takes is ``test_x[seed3]``.  An ``@`` inside the brackets stays.
    """
    head, at, _ = nodeid.rpartition("@")
    return head if at and head.endswith("]") else nodeid


def seed_of(nodeid: str) -> int | None:
    """Return the seed in a test id such as ``test_x[seed12]`` or ``test_x[3-seed12]``."""
    if not nodeid.endswith("]"):
        return None
    for part in nodeid.rpartition("[")[2].rstrip("]").split("-"):
        if part.startswith("seed") and part[4:].isdigit():
            return int(part[4:])
    return None


def replay_command(seed: int, nodeid: str) -> str:
    """Return the command that runs the test ``nodeid`` under ``seed`` again."""
    return shlex.join(["python", "-m", "pytest", nodeid, "--seed", str(seed)])


SEEDS = pytest.StashKey[list[int]]()
